//! MiniMind's tokenizer (byte-level BPE) through the `tokenizers` crate, native and wasm.
//!
//! Ids match Hugging Face's `tokenizers` exactly (tests/fixtures/tokenizer/ids.json, written by
//! tools/reference/tokenizer_ids.py). What this file adds is a readable piece per token: byte-level
//! BPE stores tokens in GPT-2's byte alphabet ("Ġworld", "ä½łå¥½"), which no reader should meet.

use std::str::FromStr;

use serde::Serialize;

use crate::Error;

/// One encoded text: ids for the model, and the same tokens as people read them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Encoding {
    pub ids: Vec<u32>,
    pub pieces: Vec<String>,
}

pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Readable piece of every id, worked out once (MiniMind has 6400).
    pieces: Vec<String>,
}

impl Tokenizer {
    /// Reads a Hugging Face `tokenizer.json`.
    pub fn from_json(text: &str) -> Result<Tokenizer, Error> {
        let inner = tokenizers::Tokenizer::from_str(text)
            .map_err(|e| Error::Tokenizer(format!("cannot read tokenizer.json: {e}")))?;
        let byte_level = uses_byte_level(text);
        let added = inner.get_added_tokens_decoder();
        let id_count = inner.get_vocab(true).values().max().map_or(0, |&id| id + 1);
        let pieces = (0..id_count)
            .map(|id| match (added.get(&id), inner.id_to_token(id)) {
                // Added tokens (<|im_start|> …) are stored as plain text, not in the byte alphabet.
                (Some(token), _) => token.content.clone(),
                (None, Some(token)) if byte_level => readable(&token),
                (None, Some(token)) => token,
                (None, None) => String::new(),
            })
            .collect();
        Ok(Tokenizer { inner, pieces })
    }

    /// Encodes without a post-processor's extras (MiniMind has none); special tokens written in
    /// the text, like `<|im_start|>`, become their single ids.
    pub fn encode(&self, text: &str) -> Result<Encoding, Error> {
        let encoding = self.inner.encode(text, false).map_err(|e| Error::Tokenizer(format!("cannot encode: {e}")))?;
        let ids = encoding.get_ids().to_vec();
        let pieces = ids.iter().map(|&id| self.id_to_piece(id)).collect();
        Ok(Encoding { ids, pieces })
    }

    /// Text of a sequence of ids, special tokens included. Ids that end inside a multi-byte
    /// character decode to U+FFFD there, as in `tokenizers`; `id_to_piece` shows such bytes instead.
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= self.pieces.len()) {
            return Err(Error::Tokenizer(format!("id {bad} is outside the vocabulary (size {})", self.pieces.len())));
        }
        self.inner.decode(ids, false).map_err(|e| Error::Tokenizer(format!("cannot decode: {e}")))
    }

    /// Number of ids (largest id + 1), added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.pieces.len()
    }

    /// The token as a person reads it: its text when its bytes are whole UTF-8 (spaces and newlines
    /// kept as they are), bytes in hex like `<E4 BD>` where it holds only part of a character,
    /// special tokens as written. Never U+FFFD. An id outside the vocabulary gives `<unknown id N>`.
    pub fn id_to_piece(&self, id: u32) -> String {
        match self.pieces.get(id as usize) {
            Some(piece) => piece.clone(),
            None => format!("<unknown id {id}>"),
        }
    }
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

/// Byte-level token -> readable text: whole UTF-8 runs as text, the rest as `<XX YY>`.
fn readable(token: &str) -> String {
    let Some(bytes) = token.chars().map(byte_of).collect::<Option<Vec<u8>>>() else {
        return token.to_owned();
    };
    let mut out = String::new();
    let mut partial: Vec<u8> = Vec::new();
    for chunk in bytes.utf8_chunks() {
        if !chunk.valid().is_empty() {
            flush_hex(&mut out, &mut partial);
            out.push_str(chunk.valid());
        }
        partial.extend_from_slice(chunk.invalid());
    }
    flush_hex(&mut out, &mut partial);
    out
}

fn flush_hex(out: &mut String, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
    out.push('<');
    out.push_str(&hex.join(" "));
    out.push('>');
    bytes.clear();
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
