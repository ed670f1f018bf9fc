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
    minimind().encode(text).unwrap().pieces
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
        assert_eq!(encoding.pieces.len(), encoding.ids.len());
        for piece in &encoding.pieces {
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
fn partial_characters_show_as_hex_bytes() {
    // 🙂 is F0 9F 99 82; MiniMind splits it into three tokens.
    assert_eq!(pieces("🙂"), ["<F0 9F>", "<99>", "<82>"]);
    // é is C3 A9, one token "Ã©"; ï is C3 AF, split as C3 | AF.
    assert_eq!(pieces("café"), ["c", "af", "é"]);
    assert_eq!(pieces("ï"), ["<C3>", "<AF>"]);
}

#[test]
fn special_tokens_show_as_themselves() {
    let encoding = minimind().encode("<|im_start|>user\n你好<|im_end|>").unwrap();
    assert_eq!(encoding.ids, [1, 832, 311, 234, 1968, 2]);
    assert_eq!(encoding.pieces, ["<|im_start|>", "us", "er", "\n", "你好", "<|im_end|>"]);
    assert_eq!(minimind().id_to_piece(0), "<|endoftext|>");
}

#[test]
fn empty_text_has_no_tokens() {
    let encoding = minimind().encode("").unwrap();
    assert!(encoding.ids.is_empty() && encoding.pieces.is_empty());
    assert_eq!(minimind().decode(&[]).unwrap(), "");
}

#[test]
fn vocabulary_is_minimind_size() {
    assert_eq!(minimind().vocab_size(), 6400);
}

#[test]
fn id_outside_vocabulary_is_refused_by_decode_and_marked_by_id_to_piece() {
    let tokenizer = minimind();
    let e = tokenizer.decode(&[1602, 6400]).unwrap_err();
    assert!(e.to_string().contains("6400") && e.to_string().contains("outside"), "{e}");
    assert_eq!(tokenizer.id_to_piece(6400), "<unknown id 6400>");
}

#[test]
fn malformed_tokenizer_json_is_refused() {
    let e = Tokenizer::from_json("{\"model\": 3}").err().expect("refused");
    assert!(e.to_string().contains("tokenizer.json"), "{e}");
}
