//! MiniMind's tokenizer (byte-level BPE) through the `tokenizers` crate, native and wasm.
//!
//! Ids match Hugging Face's `tokenizers` exactly (tests/fixtures/tokenizer/ids.json, written by
//! tools/reference/tokenizer_ids.py). What this file adds is a readable piece per token: byte-level
//! BPE stores tokens in GPT-2's byte alphabet ("Ġworld", "ä½łå¥½"), which no reader should meet, and
//! cuts characters between tokens (昨 = E6 98 | A8), which `read` joins back and marks (昨¹ 昨²).

use std::str::FromStr;

use serde::Serialize;

use crate::model::config::MAX_VOCAB;
use crate::{Error, Said};

/// One encoded text: ids for the model, and the same tokens as people read them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Encoding {
    pub ids: Vec<u32>,
    #[serde(flatten)]
    pub read: Reading,
}

/// A run of tokens as a person reads it, one entry per token. Byte-level BPE may cut a character
/// (昨 is E6 98 A8) over several tokens; each of those tokens then shows the character with its
/// part as a superscript (昨¹ 昨²), so the sentence reads back, and keeps its bytes for a tooltip.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Reading {
    /// The characters each token holds, whole or as a marked part ("昨¹", " world", "<|im_end|>");
    /// bytes that form no character in the run stay hex, like `<E6 98>`. Never U+FFFD.
    pub pieces: Vec<String>,
    /// The token's bytes in hex, "E6 98".
    pub bytes: Vec<String>,
    /// The whole characters the token is part of ("昨" for both halves of 昨), the piece itself
    /// for a token that cuts no character.
    pub chars: Vec<String>,
    /// Whether the token holds only part of some character.
    pub split: Vec<bool>,
    /// Whether the token is one of the tokenizer's added (special) tokens, `<|im_start|>` and the
    /// like, which stand for no text of their own and are drawn apart from the text's tokens.
    pub special: Vec<bool>,
}

/// How many times longer a tokenizer's normalizer may make a text (check_growth), and the bytes
/// any text may grow to whatever its length.
const MAX_GROWTH: usize = 32;
const GROWTH_ROOM: usize = 1 << 16;

pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// The bytes of every id, worked out once (MiniMind has 6400).
    bytes: Vec<Vec<u8>>,
    /// Whether each id is an added (special) token.
    special: Vec<bool>,
}

/// A tokenizer refused by name (`key` is `tokenizer.<name>`, said as `core.tokenizer.<name>` in the
/// page's strings).
fn said(key: &'static str, args: Vec<(&'static str, String)>, text: String) -> Error {
    Error::Tokenizer(Said { key, args, text })
}

impl Tokenizer {
    /// Reads a Hugging Face `tokenizer.json` on its own, up to the largest vocabulary attnscope accepts.
    pub fn from_json(text: &str) -> Result<Tokenizer, Error> {
        Tokenizer::for_model(text, MAX_VOCAB)
    }

    /// Reads a `tokenizer.json` for a model with `vocab_size` ids, refused when its ids do not fit.
    /// The check comes before the per-id pieces are built: a single entry `"a": 400000000` would
    /// otherwise ask for 400 million of them, and `id + 1` of 4294967295 would wrap.
    pub fn for_model(text: &str, vocab_size: usize) -> Result<Tokenizer, Error> {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            let (cut, args) = crate::json_fault(&e);
            return Err(said(if cut { "tokenizer.jsonCutShort" } else { "tokenizer.notJson" }, args, format!("tokenizer.json is not valid JSON: {e}")));
        }
        // Valid JSON of another kind ([], a number, a string) is said as that, not in serde's words.
        if !text.trim_start().starts_with('{') {
            return Err(said("tokenizer.notObject", vec![], "tokenizer.json is valid JSON but not a tokenizer object { … }".to_string()));
        }
        let inner = tokenizers::Tokenizer::from_str(text)
            .map_err(|e| said("tokenizer.unreadable", vec![("why", e.to_string())], format!("cannot read tokenizer.json: {e}")))?;
        let byte_level = uses_byte_level(text);
        let added = inner.get_added_tokens_decoder();
        let vocab = inner.get_vocab(true);
        let id_count = vocab.values().max().map_or(0, |&id| u64::from(id) + 1);
        // No tokens at all: nothing could be read with it, said as that (not later as a BOS outside it).
        if vocab.is_empty() {
            return Err(said("tokenizer.empty", vec![], "tokenizer.json has no tokens".to_string()));
        }
        if id_count > vocab_size as u64 {
            // Said by entries when the ids run 0.. without gaps; otherwise by the largest id, since
            // one stray `"a": 400000000` does not make 400 million tokens.
            let entries = vocab.len() as u64;
            let (key, args, text) = if entries == id_count {
                let args = vec![("count", id_count.to_string()), ("vocab", vocab_size.to_string())];
                ("tokenizer.tooBig", args, format!("the tokenizer has {id_count} tokens but the model's vocabulary has only {vocab_size}"))
            } else {
                let largest = id_count - 1;
                let last = vocab_size.saturating_sub(1).to_string();
                let args = vec![("largest", largest.to_string()), ("entries", entries.to_string()), ("vocab", vocab_size.to_string()), ("last", last)];
                let text = format!("the tokenizer has {entries} tokens, one of them with id {largest}, but the model's vocabulary has only {vocab_size} ids");
                ("tokenizer.idTooBig", args, text)
            };
            return Err(said(key, args, text));
        }
        let bytes = (0..id_count as u32)
            .map(|id| match (added.get(&id), inner.id_to_token(id)) {
                // Added tokens (<|im_start|> …) are stored as plain text, not in the byte alphabet.
                (Some(token), _) => token.content.clone().into_bytes(),
                (None, Some(token)) if byte_level => {
                    token.chars().map(byte_of).collect::<Option<Vec<u8>>>().unwrap_or_else(|| token.into_bytes())
                }
                (None, Some(token)) => byte_fallback(&token).unwrap_or_else(|| token.into_bytes()),
                (None, None) => Vec::new(),
            })
            .collect();
        let special = (0..id_count as u32).map(|id| added.contains_key(&id)).collect();
        let tokenizer = Tokenizer { inner, bytes, special };
        // A tokenizer that cannot split plain words (a WordLevel vocabulary without its [UNK]) is
        // refused here, while the model before it is still loaded, not on every text afterwards.
        tokenizer.text_ids("Hello, world").map_err(|e| match e {
            Error::Tokenizer(s) => said("tokenizer.cannotSplit", s.args, format!("the tokenizer cannot split plain text: {}", s.text)),
            other => other,
        })?;
        Ok(tokenizer)
    }

    /// Encodes without a post-processor's extras (MiniMind has none); special tokens written in
    /// the text, like `<|im_start|>`, become their single ids.
    pub fn encode(&self, text: &str) -> Result<Encoding, Error> {
        let ids = self.text_ids(text)?;
        let read = self.read(&ids);
        Ok(Encoding { ids, read })
    }

    fn text_ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.check_growth(text)?;
        let encoding = self.inner.encode(text, false).map_err(|e| said("tokenizer.encode", vec![("why", e.to_string())], format!("cannot encode: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Refuses a text the tokenizer's normalizer would make much longer (a `Replace` of "a" by 5000
    /// a's): splitting what it makes could take minutes. Unicode normalization grows a text by at
    /// most 18 times (U+FDFA), so MAX_GROWTH times its bytes, and some room for short texts, pass.
    fn check_growth(&self, text: &str) -> Result<(), Error> {
        use tokenizers::Normalizer;
        let Some(normalizer) = self.inner.get_normalizer() else { return Ok(()) };
        let mut normalized = tokenizers::NormalizedString::from(text);
        normalizer.normalize(&mut normalized).map_err(|e| said("tokenizer.encode", vec![("why", e.to_string())], format!("cannot encode: {e}")))?;
        let (from, to) = (text.len(), normalized.get().len());
        if to > MAX_GROWTH * from + GROWTH_ROOM {
            let args = vec![("from", from.to_string()), ("to", to.to_string())];
            return Err(said("tokenizer.grows", args, format!("the tokenizer's normalizer turns these {from} bytes of text into {to}, too many to split")));
        }
        Ok(())
    }

    /// Encodes `text` after the token `bos`, as MiniMind's pretraining puts `<|im_start|>` (its
    /// config's `bos_token_id`) before every text it trains on. `bos` must be one of the tokenizer's
    /// special tokens: an ordinary one would be read as text that is not there. The BOS token holds
    /// no character of the text, so its `chars` is empty; it reads as itself (`<|im_start|>`), and
    /// the text's tokens read exactly as `encode` reads them (its bytes are whole characters).
    pub fn encode_with_bos(&self, text: &str, bos: u32) -> Result<Encoding, Error> {
        if !self.special.get(bos as usize).copied().unwrap_or(false) {
            let (key, what) = if (bos as usize) < self.bytes.len() {
                ("tokenizer.bosOrdinary", format!("\"{}\", an ordinary token", self.id_to_piece(bos)))
            } else {
                ("tokenizer.bosOutside", "outside the vocabulary".to_string())
            };
            let args = vec![("id", bos.to_string()), ("piece", if (bos as usize) < self.bytes.len() { self.id_to_piece(bos) } else { String::new() })];
            return Err(said(key, args, format!("bos_token_id {bos} is not a special token of this tokenizer ({what}), so it cannot start the text")));
        }
        let ids: Vec<u32> = std::iter::once(bos).chain(self.text_ids(text)?).collect();
        let mut read = self.read(&ids);
        read.chars[0].clear();
        Ok(Encoding { ids, read })
    }

    /// Text of a sequence of ids, special tokens included. Ids that end inside a multi-byte
    /// character decode to U+FFFD there, as in `tokenizers`; `read` shows such bytes instead. An id
    /// past the tokenizer's vocabulary (a model whose vocab_size is padded beyond its tokenizer's
    /// may predict one) is no text either, and decodes to U+FFFD too, which the page never writes
    /// into the text box.
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        let mut text = String::new();
        for run in ids.split_inclusive(|&id| id as usize >= self.bytes.len()) {
            let (known, unknown) = match run.split_last() {
                Some((&last, rest)) if last as usize >= self.bytes.len() => (rest, true),
                _ => (run, false),
            };
            if !known.is_empty() {
                text += &self.inner.decode(known, false).map_err(|e| said("tokenizer.decode", vec![("why", e.to_string())], format!("cannot decode: {e}")))?;
            }
            if unknown {
                text.push('\u{FFFD}');
            }
        }
        Ok(text)
    }

    /// The ids that are ordinary tokens of text: inside the tokenizer's vocabulary and not an added
    /// token (`<|im_start|>`, `<think>` …), which text only holds where a chat template puts it.
    pub fn ordinary_ids(&self) -> Vec<u32> {
        (0..self.bytes.len() as u32).filter(|&id| !self.special[id as usize]).collect()
    }

    /// The ordinary ids a reader can read alone: whole UTF-8 characters, none of them a control
    /// character (a byte-level piece of a character would be drawn as `<E4 BD>`, a control one as
    /// a box).
    pub fn readable_ids(&self) -> Vec<u32> {
        let readable = |b: &[u8]| std::str::from_utf8(b).is_ok_and(|s| !s.is_empty() && !s.chars().any(char::is_control));
        self.ordinary_ids().into_iter().filter(|&id| readable(&self.bytes[id as usize])).collect()
    }

    /// Number of ids (largest id + 1), added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.bytes.len()
    }

    /// One token alone as a person reads it: its text when its bytes are whole UTF-8 (spaces and
    /// newlines kept as they are), bytes in hex like `<E4 BD>` where it holds only part of a
    /// character, special tokens as written. Never U+FFFD. An id outside the vocabulary gives
    /// `<unknown id N>`.
    pub fn id_to_piece(&self, id: u32) -> String {
        self.read(&[id]).pieces.remove(0)
    }

    /// A run of ids as it reads in sequence: the bytes of all tokens are decoded together, so a
    /// character cut over neighbouring tokens is found and shown in each of them with its part.
    pub fn read(&self, ids: &[u32]) -> Reading {
        let token_bytes: Vec<&[u8]> = ids.iter().map(|&id| self.bytes.get(id as usize).map_or(&[][..], Vec::as_slice)).collect();
        let all: Vec<u8> = token_bytes.concat();
        // Token k holds bytes starts[k]..starts[k + 1] of `all`.
        let starts: Vec<usize> = std::iter::once(0).chain(token_bytes.iter().scan(0, |at, b| { *at += b.len(); Some(*at) })).collect();
        let token_at = |byte: usize| starts.partition_point(|&s| s <= byte) - 1;
        let units = units(&all);
        let mut reading = Reading::default();
        let mut next_unit = 0;
        for (k, &id) in ids.iter().enumerate() {
            let (from, to) = (starts[k], starts[k + 1]);
            reading.bytes.push(hex(&all[from..to]));
            if id as usize >= self.bytes.len() {
                let unknown = format!("<unknown id {id}>");
                reading.chars.push(unknown.clone());
                reading.pieces.push(unknown);
                reading.split.push(false);
                reading.special.push(false);
                continue;
            }
            let (mut piece, mut chars, mut split, mut stray) = (String::new(), String::new(), false, Vec::new());
            // Units are in byte order; the first one this token touches may have begun in an earlier token.
            while next_unit < units.len() && units[next_unit].end <= from {
                next_unit += 1;
            }
            let mut u = next_unit;
            while u < units.len() && units[u].start < to {
                let unit = &units[u];
                match unit.char {
                    None => stray.extend_from_slice(&all[unit.start.max(from)..unit.end.min(to)]),
                    Some(c) => {
                        flush_hex(&mut piece, &mut stray);
                        piece.push(c);
                        chars.push(c);
                        let (first, last) = (token_at(unit.start), token_at(unit.end - 1));
                        if first != last {
                            piece.push(superscript(k - first + 1));
                            split = true;
                        }
                    }
                }
                u += 1;
            }
            flush_hex(&mut piece, &mut stray);
            reading.chars.push(if chars.is_empty() { piece.clone() } else { chars });
            reading.pieces.push(piece);
            reading.split.push(split);
            reading.special.push(self.special[id as usize]);
        }
        reading
    }
}

/// One character of a byte run, or bytes that form none (`char` None), at `start..end`.
struct Unit {
    start: usize,
    end: usize,
    char: Option<char>,
}

fn units(bytes: &[u8]) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut at = 0;
    for chunk in bytes.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            out.push(Unit { start: at + i, end: at + i + c.len_utf8(), char: Some(c) });
        }
        at += chunk.valid().len();
        if !chunk.invalid().is_empty() {
            out.push(Unit { start: at, end: at + chunk.invalid().len(), char: None });
            at += chunk.invalid().len();
        }
    }
    out
}

/// The part of a cut character a token holds: 1 → "¹". UTF-8 characters have at most 4 bytes.
fn superscript(n: usize) -> char {
    ['¹', '²', '³', '⁴'][n.clamp(1, 4) - 1]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(" ")
}

/// Whether tokens live in GPT-2's byte alphabet: the decoder is ByteLevel, alone or in a Sequence.
fn uses_byte_level(tokenizer_json: &str) -> bool {
    let Ok(json) = serde_json::from_str::<serde_json::Value>(tokenizer_json) else {
        return false;
    };
    let is_byte_level = |d: &serde_json::Value| d.get("type").and_then(|t| t.as_str()) == Some("ByteLevel");
    let decoder = &json["decoder"];
    is_byte_level(decoder) || decoder["decoders"].as_array().is_some_and(|ds| ds.iter().any(is_byte_level))
}

/// Bytes that form no character, written as hex in angle brackets after `out`.
fn flush_hex(out: &mut String, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    out.push('<');
    out.push_str(&hex(bytes));
    out.push('>');
    bytes.clear();
}

/// SentencePiece's byte fallback tokens, `<0xE6>`, stand for one byte.
fn byte_fallback(token: &str) -> Option<Vec<u8>> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok().map(|b| vec![b])).flatten()
}

/// Inverse of GPT-2's `bytes_to_unicode`: printable Latin-1 bytes stand for themselves, the other
/// 68 bytes (controls, space, DEL, NBSP, soft hyphen) were moved, in order, to U+0100 onwards.
fn byte_of(c: char) -> Option<u8> {
    let printable = |b: u32| matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
    let code = c as u32;
    if printable(code) {
        return Some(code as u8);
    }
    let shifted = code.checked_sub(0x100)?;
    (0u32..=0xFF).filter(|&b| !printable(b)).nth(shifted as usize).map(|b| b as u8)
}
