//! MiniMind's tokenizer: the same ids as Hugging Face's `tokenizers`, lossless round trips, and
//! pieces a person can read.

use attnscope::tokenizer::Tokenizer;

const TOKENIZER_JSON: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/minimind/tokenizer.json"));
/// Written by tools/reference/tokenizer_ids.py with the Python `tokenizers` package.
const REFERENCE_IDS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tokenizer/ids.json"));

fn minimind() -> Tokenizer {
    Tokenizer::from_json(TOKENIZER_JSON).unwrap()
}

fn reference_cases() -> Vec<(String, Vec<u32>)> {
    let fixture: serde_json::Value = serde_json::from_str(REFERENCE_IDS).unwrap();
    fixture["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| (case["text"].as_str().unwrap().to_owned(), serde_json::from_value(case["ids"].clone()).unwrap()))
        .collect()
}

fn pieces(text: &str) -> Vec<String> {
    minimind().encode(text).unwrap().read.pieces
}

/// The characters a run of pieces reads as, superscript part marks dropped and each cut character
/// written once: what a reader of the chips reads back.
fn read_back(pieces: &[String]) -> String {
    let marks = ['¹', '²', '³', '⁴'];
    let mut out = String::new();
    for piece in pieces {
        let mut chars = piece.chars().peekable();
        while let Some(c) = chars.next() {
            match chars.peek() {
                Some(m) if marks.contains(m) => {
                    // A cut character is written by the token holding its first part only.
                    if *m == '¹' {
                        out.push(c);
                    }
                    chars.next();
                }
                _ => out.push(c),
            }
        }
    }
    out
}

#[test]
fn ids_match_hugging_face_tokenizers() {
    let tokenizer = minimind();
    let cases = reference_cases();
    assert!(cases.len() >= 10);
    for (text, ids) in cases {
        assert_eq!(tokenizer.encode(&text).unwrap().ids, ids, "{text:?}");
    }
}

#[test]
fn decode_inverts_encode() {
    let tokenizer = minimind();
    for (text, _) in reference_cases() {
        let ids = tokenizer.encode(&text).unwrap().ids;
        assert_eq!(tokenizer.decode(&ids).unwrap(), text);
    }
}

#[test]
fn pieces_never_hold_the_replacement_character() {
    let tokenizer = minimind();
    for (text, _) in reference_cases() {
        let encoding = tokenizer.encode(&text).unwrap();
        assert_eq!(encoding.read.pieces.len(), encoding.ids.len());
        for piece in &encoding.read.pieces {
            assert!(!piece.contains('\u{FFFD}'), "{piece:?} in {text:?}");
        }
    }
    for id in 0..tokenizer.vocab_size() as u32 {
        assert!(!tokenizer.id_to_piece(id).contains('\u{FFFD}'), "id {id}");
    }
}

#[test]
fn whole_characters_show_as_text_with_real_spaces() {
    assert_eq!(pieces("Hello world"), ["Hello", " world"]);
    assert_eq!(pieces("今天天气很好"), ["今天", "天气", "很", "好"]);
    assert_eq!(pieces("a  b"), ["a", " ", " b"]);
    assert_eq!(pieces("x\n"), ["x", "\n"]);
}

#[test]
fn a_character_cut_over_tokens_shows_in_each_with_its_part() {
    // 🙂 is F0 9F 99 82; MiniMind splits it into three tokens.
    let emoji = minimind().encode("🙂").unwrap().read;
    assert_eq!(emoji.pieces, ["🙂¹", "🙂²", "🙂³"]);
    assert_eq!(emoji.bytes, ["F0 9F", "99", "82"]);
    assert_eq!(emoji.chars, ["🙂", "🙂", "🙂"]);
    assert_eq!(emoji.split, [true, true, true]);
    // é is C3 A9, one token "Ã©"; ï is C3 AF, split as C3 | AF.
    assert_eq!(pieces("café"), ["c", "af", "é"]);
    assert_eq!(pieces("ï"), ["ï¹", "ï²"]);
}

#[test]
fn chinese_split_into_byte_tokens_reads_back() {
    let tokenizer = minimind();
    for text in ["昨天天气很好", "昨天我在北京吃了烤鸭🦆，今天去上海。", "她的猫叫小红", "鬱"] {
        let encoding = tokenizer.encode(text).unwrap();
        let read = &encoding.read;
        assert_eq!(read_back(&read.pieces), text, "{:?}", read.pieces);
        for (k, piece) in read.pieces.iter().enumerate() {
            assert!(!piece.contains('<'), "{piece:?} in {text:?} is shown as bytes");
            // Each token's bytes, joined, are the text's UTF-8: the hex column is the truth.
            let own = tokenizer.id_to_piece(encoding.ids[k]);
            assert_eq!(read.split[k], own.contains('<'), "{piece:?} / {own:?}");
        }
        let hex: String = read.bytes.join(" ");
        let expect: Vec<String> = text.bytes().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, expect.join(" "));
    }
}

#[test]
fn a_cut_character_is_found_however_its_bytes_fall() {
    let tokenizer = minimind();
    // 昨 is E6 98 A8, here carried by three single-byte tokens (byte-level BPE has one per byte).
    let single = |b: u8| (0..tokenizer.vocab_size() as u32).find(|&id| tokenizer.id_to_piece(id) == format!("<{b:02X}>")).unwrap();
    let (e6, x98, a8) = (single(0xE6), single(0x98), single(0xA8));
    let read = tokenizer.read(&[e6, x98, a8]);
    assert_eq!(read.pieces, ["昨¹", "昨²", "昨³"]);
    assert_eq!(read.chars, ["昨", "昨", "昨"]);
    let bytes_of_each: Vec<u32> = "昨天".bytes().map(single).collect();
    assert_eq!(tokenizer.decode(&bytes_of_each).unwrap(), "昨天");
    assert_eq!(tokenizer.read(&bytes_of_each).pieces, ["昨¹", "昨²", "昨³", "天¹", "天²", "天³"]);
}

#[test]
fn mixed_english_and_chinese() {
    let read = minimind().encode("Hello 昨天 world").unwrap().read;
    assert_eq!(read.pieces.first().map(String::as_str), Some("Hello"));
    assert_eq!(read.pieces.last().map(String::as_str), Some(" world"));
    assert_eq!(read_back(&read.pieces), "Hello 昨天 world");
}

#[test]
fn bytes_that_form_no_character_stay_hex() {
    let tokenizer = minimind();
    // E6 98 and nothing after: half a character at the end of the run.
    let half: Vec<u32> = tokenizer.encode("昨").unwrap().ids;
    let cut = &half[..half.len() - 1];
    let read = tokenizer.read(cut);
    assert!(read.pieces.iter().all(|p| p.starts_with('<') && p.ends_with('>')), "{:?}", read.pieces);
    assert_eq!(read.split, vec![false; cut.len()]);
    // A lone continuation byte (A8) between whole characters.
    let a8 = (0..tokenizer.vocab_size() as u32).find(|&id| tokenizer.id_to_piece(id) == "<A8>").unwrap();
    let mut ids = tokenizer.encode("好").unwrap().ids;
    ids.push(a8);
    ids.extend(tokenizer.encode("很").unwrap().ids);
    assert_eq!(tokenizer.read(&ids).pieces, ["好", "<A8>", "很"]);
}

#[test]
fn special_tokens_show_as_themselves() {
    let encoding = minimind().encode("<|im_start|>user\n你好<|im_end|>").unwrap();
    assert_eq!(encoding.ids, [1, 832, 311, 234, 1968, 2]);
    assert_eq!(encoding.read.pieces, ["<|im_start|>", "us", "er", "\n", "你好", "<|im_end|>"]);
    assert_eq!(minimind().id_to_piece(0), "<|endoftext|>");
}

#[test]
fn empty_text_has_no_tokens() {
    let encoding = minimind().encode("").unwrap();
    assert!(encoding.ids.is_empty() && encoding.read.pieces.is_empty());
    assert_eq!(minimind().decode(&[]).unwrap(), "");
}

#[test]
fn vocabulary_is_minimind_size() {
    assert_eq!(minimind().vocab_size(), 6400);
}

#[test]
fn id_outside_vocabulary_decodes_to_no_text_and_is_marked_by_id_to_piece() {
    let tokenizer = minimind();
    // A model with a padded vocab_size may predict an id its tokenizer lacks: no text, as a cut byte.
    let hello = tokenizer.decode(&tokenizer.encode("Hello").unwrap().ids).unwrap();
    let mut ids = tokenizer.encode("Hello").unwrap().ids;
    ids.extend([6400, 9999]);
    ids.extend(tokenizer.encode(" world").unwrap().ids);
    assert_eq!(tokenizer.decode(&ids).unwrap(), format!("{hello}\u{FFFD}\u{FFFD} world"));
    assert_eq!(tokenizer.decode(&[6400]).unwrap(), "\u{FFFD}");
    assert_eq!(tokenizer.id_to_piece(6400), "<unknown id 6400>");
    assert_eq!(tokenizer.read(&[1602, 6400]).pieces[1], "<unknown id 6400>");
}

#[test]
fn malformed_tokenizer_json_is_refused() {
    let e = Tokenizer::from_json("{\"model\": 3}").err().expect("refused");
    assert!(e.to_string().contains("tokenizer.json"), "{e}");
}

/// MiniMind's `<|im_start|>`, its config's `bos_token_id`.
const BOS: u32 = 1;

/// The text's own tokens after BOS read exactly as the text alone reads, field by field.
fn assert_bos_then_text(text: &str) {
    let tokenizer = minimind();
    let alone = tokenizer.encode(text).unwrap();
    let with = tokenizer.encode_with_bos(text, BOS).unwrap();
    let n = alone.ids.len() + 1;
    assert_eq!(with.ids[0], BOS, "{text}");
    assert_eq!(with.ids[1..], alone.ids[..], "{text}");
    let r = &with.read;
    assert_eq!((r.pieces.len(), r.bytes.len(), r.chars.len(), r.split.len(), r.special.len()), (n, n, n, n, n), "{text}: aligned");
    assert_eq!((r.pieces[0].as_str(), r.chars[0].as_str(), r.split[0], r.special[0]), ("<|im_start|>", "", false, true), "{text}: BOS reads as itself and holds no character of the text");
    assert_eq!(r.bytes[0], "<|im_start|>".bytes().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(" "));
    assert_eq!(r.pieces[1..], alone.read.pieces[..], "{text}");
    assert_eq!(r.bytes[1..], alone.read.bytes[..], "{text}");
    assert_eq!(r.chars[1..], alone.read.chars[..], "{text}");
    assert_eq!(r.split[1..], alone.read.split[..], "{text}");
    assert!(r.special[1..].iter().all(|&s| !s), "{text}: the text's tokens are ordinary");
    assert_eq!(tokenizer.decode(&with.ids).unwrap(), format!("<|im_start|>{text}"));
}

#[test]
fn bos_comes_first_and_the_text_reads_as_without_it() {
    assert_bos_then_text("The cat sat on the mat because it was tired.");
}

#[test]
fn bos_before_chinese_keeps_cut_characters_marked() {
    let text = "昨天下雨了，今天天气很好。";
    assert!(minimind().encode(text).unwrap().read.split.contains(&true), "the case needs a cut character");
    assert_bos_then_text(text);
}

#[test]
fn bos_alone_is_the_whole_input_of_an_empty_text() {
    let with = minimind().encode_with_bos("", BOS).unwrap();
    assert_eq!(with.ids, [BOS]);
    assert_eq!(with.read.pieces, ["<|im_start|>"]);
    assert_eq!(with.read.chars, [""]);
    assert_eq!(with.read.special, [true]);
}

#[test]
fn only_a_special_token_can_be_bos() {
    let tokenizer = minimind();
    let ordinary = tokenizer.encode("cat").unwrap().ids[0];
    let e = tokenizer.encode_with_bos("a", ordinary).unwrap_err().to_string();
    assert!(e.contains(&format!("bos_token_id {ordinary}")) && e.contains("not a special token") && e.contains("ordinary"), "{e}");
    let e = tokenizer.encode_with_bos("a", 6400).unwrap_err().to_string();
    assert!(e.contains("outside the vocabulary"), "{e}");
}

#[test]
fn special_tokens_are_marked_in_any_reading() {
    let encoding = minimind().encode("<|im_start|>user\n你好<|im_end|>").unwrap();
    assert_eq!(encoding.read.special, [true, false, false, false, false, true]);
}

#[test]
fn a_tokenizer_that_cannot_split_plain_text_is_refused_when_loaded() {
    // WordLevel with no [UNK] in its vocabulary fails on any word it lacks: refused at load, by key.
    let json = r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1}, "unk_token": "[UNK]"}}"#;
    assert_eq!(refusal_key(json), "tokenizer.cannotSplit");
}

/// The key a tokenizer.json for a 64-id model is refused by, the refusal's words in the message.
fn refusal_key(json: &str) -> &'static str {
    match Tokenizer::for_model(json, 64) {
        Err(attnscope::Error::Tokenizer(s)) => {
            eprintln!("{}: {}", s.key, s.text);
            s.key
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("accepted: {json}"),
    }
}

#[test]
fn json_that_is_not_a_tokenizer_object_is_refused_in_plain_words() {
    for json in ["[]", " 42", "\"tokenizer\""] {
        assert_eq!(refusal_key(json), "tokenizer.notObject", "{json}");
    }
}

#[test]
fn a_tokenizer_without_tokens_is_refused_when_loaded() {
    let json = r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null,
        "pre_tokenizer": null, "post_processor": null, "decoder": null,
        "model": {"type": "BPE", "vocab": {}, "merges": []}}"#;
    assert_eq!(refusal_key(json), "tokenizer.empty");
}

#[test]
fn a_normalizer_that_inflates_the_text_is_refused_before_splitting() {
    // A Replace of "a" by 5000 a's: 2000 a's would be 10 million bytes to split, minutes of work.
    let json = format!(
        r#"{{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {{"type": "Replace", "pattern": {{"String": "a"}}, "content": "{}"}},
        "pre_tokenizer": {{"type": "Whitespace"}}, "post_processor": null, "decoder": null,
        "model": {{"type": "WordLevel", "vocab": {{"[UNK]": 0, "a": 1}}, "unk_token": "[UNK]"}}}}"#,
        "a".repeat(5000)
    );
    let tok = Tokenizer::for_model(&json, 64).expect("a short text still splits");
    assert_eq!(tok.encode("b").unwrap().ids, vec![0]);
    match tok.encode(&"a".repeat(2000)) {
        Err(attnscope::Error::Tokenizer(s)) => {
            assert_eq!(s.key, "tokenizer.grows", "{}", s.text);
            assert_eq!(s.args, vec![("from", "2000".to_string()), ("to", "10000000".to_string())]);
        }
        Err(other) => panic!("{other}"),
        Ok(e) => panic!("split into {} tokens", e.ids.len()),
    }
    // MiniMind's own (no normalizer) and ordinary text are untouched.
    assert!(minimind().encode(&"a".repeat(100_000)).is_ok());
}

#[test]
fn a_tokenizer_json_that_is_not_json_says_where() {
    let key_and_place = |json: &str| match Tokenizer::for_model(json, 64) {
        Err(attnscope::Error::Tokenizer(s)) => (s.key, s.args.iter().filter(|(k, _)| *k != "why").map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("accepted"),
    };
    // A file cut short, and one with a stray character: the page says which, and where.
    let cut = &TOKENIZER_JSON[..TOKENIZER_JSON.char_indices().nth(40).unwrap().0];
    assert_eq!(key_and_place(cut).0, "tokenizer.jsonCutShort");
    assert_eq!(key_and_place("{\n \"version\": \"1.0\" x\n}"), ("tokenizer.notJson", "line=2 column=19".into()));
}

#[test]
fn readable_ids_are_whole_characters_without_control_ones() {
    let tokenizer = minimind();
    let (ordinary, readable) = (tokenizer.ordinary_ids(), tokenizer.readable_ids());
    assert!(readable.len() > 5000 && readable.len() < ordinary.len(), "{} of {}", readable.len(), ordinary.len());
    for &id in &readable {
        let piece = tokenizer.id_to_piece(id);
        assert!(!piece.is_empty() && !piece.chars().any(char::is_control), "{id}: {piece:?}");
    }
    // A piece of a character (MiniMind's byte tokens, <0xE4> and the like) and a control character
    // are ordinary but not readable.
    let cut = ordinary.iter().copied().find(|&id| tokenizer.id_to_piece(id).starts_with("<E")).expect("a byte piece");
    assert!(!readable.contains(&cut));
    let control = ordinary.iter().copied().find(|&id| tokenizer.id_to_piece(id).chars().any(char::is_control)).expect("a control character");
    assert!(!readable.contains(&control));
}
