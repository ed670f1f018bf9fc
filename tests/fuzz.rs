//! Fuzzing of what a link or a dropped folder can hand the core: thousands of mutations of the real
//! www/models/builtin/config.json and assets/minimind/tokenizer.json, and of a tiny GGUF file's header
//! and bytes, from a fixed seed, each read as the page reads it. Nothing may panic, and no allocation may take the live heap past BUDGET: a
//! counting allocator refuses it, which aborts the run and names the case.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use attnscope::model::config::{MAX_VOCAB, MAX_WEIGHT_BYTES};
use attnscope::model::{Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::Selection;
use attnscope::{weights, Config};
use serde_json::{json, Value};

/// Live heap the whole test binary may hold at once. The real tokenizer needs a few MB; a tokenizer
/// that slipped past its size check (400 million pieces) would need gigabytes.
const BUDGET: usize = 512 << 20;

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The case being run, for the abort message.
static CASE: AtomicU64 = AtomicU64::new(u64::MAX);

struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > BUDGET {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            over_budget(layout.size());
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Says which case went over, without allocating (the allocator is the caller).
fn over_budget(size: usize) {
    struct Stack([u8; 160], usize);
    impl std::fmt::Write for Stack {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let end = (self.1 + s.len()).min(self.0.len());
            self.0[self.1..end].copy_from_slice(&s.as_bytes()[..end - self.1]);
            self.1 = end;
            Ok(())
        }
    }
    let mut line = Stack([0; 160], 0);
    let _ = match CASE.load(Ordering::Relaxed) {
        u64::MAX => std::fmt::Write::write_fmt(&mut line, format_args!("a fuzz test asked for {size} bytes past the budget\n")),
        case => std::fmt::Write::write_fmt(&mut line, format_args!("fuzz case {case} asked for {size} bytes past the budget\n")),
    };
    let _ = std::io::stderr().write_all(&line.0[..line.1]);
}

/// SplitMix64: the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Numbers and values at the edges: zero, one, the limits, 2^31 and 2^32 around, floats, wrong types.
fn edge_value(rng: &mut Rng, near: Option<&Value>) -> Value {
    let edges = [
        json!(0), json!(1), json!(2), json!(3), json!(-1), json!(6399), json!(6400), json!(262_143), json!(262_144),
        json!(8192), json!(8193), json!(400_000_000), json!(2_147_483_647u64), json!(2_147_483_648u64),
        json!(4_294_967_295u64), json!(4_294_967_296u64), json!(u64::MAX), json!(0.5), json!(1e308), json!(-1e308),
        json!(1e-300), json!(""), json!("x"), json!("silu"), json!("gelu"), json!(null), json!(true), json!(false),
        json!([]), json!({}), json!([1, 2]),
    ];
    match (rng.below(4), near.and_then(Value::as_f64)) {
        (0, Some(x)) => json!(x * 2.0),
        (1, Some(x)) => json!((x as i64).saturating_add(1)),
        _ => rng.pick(&edges).clone(),
    }
}

/// One structural change somewhere in the tree: a value replaced by an edge value, a key removed,
/// or a key the core reads added with an edge value.
fn mutate_value(rng: &mut Rng, v: &mut Value, extra_keys: &[&str]) {
    match v {
        Value::Object(map) if !map.is_empty() && rng.below(6) != 0 => {
            let key = map.keys().nth(rng.below(map.len())).cloned().expect("non-empty");
            match rng.below(5) {
                0 => {
                    map.remove(&key);
                }
                1 => {
                    let added = edge_value(rng, None);
                    map.insert(rng.pick(extra_keys).to_string(), added);
                }
                _ => mutate_value(rng, map.get_mut(&key).expect("present"), extra_keys),
            }
        }
        Value::Array(items) if !items.is_empty() && rng.below(6) != 0 => {
            let i = rng.below(items.len());
            match rng.below(4) {
                0 => {
                    items.remove(i);
                }
                _ => mutate_value(rng, &mut items[i], extra_keys),
            }
        }
        other => {
            let near = other.clone();
            *other = edge_value(rng, Some(&near));
        }
    }
}

/// Byte-level damage: a flipped byte, a cut, a repeated slice, an early end.
fn mutate_bytes(rng: &mut Rng, text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(b.len().max(1));
        match rng.below(4) {
            0 => b[at] = rng.next() as u8,
            1 => {
                let end = (at + 1 + rng.below(64)).min(b.len());
                b.drain(at..end);
            }
            2 => {
                let end = (at + 1 + rng.below(64)).min(b.len());
                let slice = b[at..end].to_vec();
                b.splice(at..at, slice);
            }
            _ => b.truncate(at),
        }
        if b.is_empty() {
            break;
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// A mutated document: most by structure (still JSON, so the core's own checks are reached), some by bytes.
fn mutate(rng: &mut Rng, original: &Value, text: &str, extra_keys: &[&str]) -> String {
    if rng.below(4) == 0 {
        return mutate_bytes(rng, text);
    }
    let mut v = original.clone();
    for _ in 0..1 + rng.below(3) {
        mutate_value(rng, &mut v, extra_keys);
    }
    v.to_string()
}

/// Runs `case` for each of `count` mutations; a panic fails the test with the input that caused it.
fn fuzz(seed: u64, count: u64, input: impl Fn(&mut Rng) -> String, case: impl Fn(&str) -> bool) -> u64 {
    let mut rng = Rng(seed);
    let mut accepted = 0;
    for n in 0..count {
        let text = input(&mut rng);
        CASE.store(n, Ordering::Relaxed);
        match catch_unwind(AssertUnwindSafe(|| case(&text))) {
            Ok(ok) => accepted += ok as u64,
            Err(_) => panic!("case {n} of seed {seed} panicked on:\n{}", &text[..text.len().min(2000)]),
        }
    }
    accepted
}

const CONFIG_KEYS: &[&str] = &[
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size",
    "vocab_size", "rope_theta", "rope_parameters", "max_position_embeddings", "qk_norm", "use_moe", "hidden_act",
    "model_type", "tie_word_embeddings", "inference_rope_scaling", "rms_norm_eps", "num_experts", "num_experts_per_tok",
    "moe_intermediate_size", "norm_topk_prob",
];

#[test]
fn mutated_configs_are_read_or_refused_and_never_panic() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/builtin/config.json")).unwrap();
    let original: Value = serde_json::from_str(&text).unwrap();
    let accepted = fuzz(0x5EED_C0F1, 6000, |rng| mutate(rng, &original, &text, CONFIG_KEYS), |input| {
        let Ok(config) = Config::from_json(input) else { return false };
        // An accepted config keeps every promise the rest of the core relies on.
        assert!(config.weight_count() * 4 <= MAX_WEIGHT_BYTES, "{input}");
        assert!(config.head_dim() % 2 == 0 && config.num_attention_heads % config.num_key_value_heads == 0, "{input}");
        assert!(config.rope_theta > 1.0 && config.vocab_size <= MAX_VOCAB, "{input}");
        assert_eq!(Config::from_json(&config.to_json()).as_ref(), Ok(&config), "a resolved config reads back as itself");
        // Small enough to build: the model runs three tokens with every tensor recorded, without NaN.
        if config.weight_count() <= 400_000 && config.max_position_embeddings >= 3 {
            let vocab = config.vocab_size as u32;
            let model = Model::new(config.clone(), weights::random(&config, 1));
            let out = model.trace(&[0, 1 % vocab, 2 % vocab], None, 0, &RunOptions::default(), Selection::all()).unwrap();
            assert!(out.logits.iter().all(|x| x.is_finite()), "{input}");
        }
        true
    });
    // The mutations must reach both sides of the checks, not only JSON errors.
    assert!((600..5400).contains(&accepted), "{accepted} of 6000 mutated configs accepted");
}

const TOKENIZER_KEYS: &[&str] = &["id", "content", "special", "type", "vocab", "merges", "added_tokens", "byte_fallback"];

/// The real tokenizer.json with one change at a place that matters: an id of the vocabulary or of
/// an added token set to an edge value, or a structural mutation anywhere.
fn mutate_tokenizer(rng: &mut Rng, original: &Value, text: &str) -> String {
    let mut v = original.clone();
    match rng.below(4) {
        0 => {
            let vocab = v["model"]["vocab"].as_object_mut().unwrap();
            let key = vocab.keys().nth(rng.below(vocab.len())).cloned().unwrap();
            vocab[&key] = edge_value(rng, vocab.get(&key));
        }
        1 => {
            let added = v["added_tokens"].as_array_mut().unwrap();
            let i = rng.below(added.len());
            let field = *rng.pick(&["id", "content", "special"]);
            added[i][field] = edge_value(rng, added[i].get(field));
        }
        2 => mutate_value(rng, &mut v, TOKENIZER_KEYS),
        _ => return mutate_bytes(rng, text),
    }
    v.to_string()
}

#[test]
fn mutated_tokenizers_are_read_or_refused_and_never_panic() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/minimind/tokenizer.json")).unwrap();
    let original: Value = serde_json::from_str(&text).unwrap();
    let sample = "<|im_start|>user\n你好，昨天 the world 🌍<|im_end|>";
    let accepted = fuzz(0x5EED_70C3, 600, |rng| mutate_tokenizer(rng, &original, &text), |input| {
        // The page's path: a model of MiniMind's 6400 ids; every fourth case, the largest model allowed.
        let vocab = if input.len() % 4 == 0 { MAX_VOCAB } else { 6400 };
        let Ok(t) = Tokenizer::for_model(input, vocab) else { return false };
        assert!(t.vocab_size() <= vocab, "{} ids for a vocabulary of {vocab}", t.vocab_size());
        if let Ok(enc) = t.encode(sample) {
            assert_eq!(enc.read.pieces.len(), enc.ids.len());
            let _ = t.decode(&enc.ids);
        }
        for id in [t.vocab_size() as u32, u32::MAX] {
            assert_eq!(t.id_to_piece(id), format!("<unknown id {id}>"));
        }
        true
    });
    assert!((60..540).contains(&accepted), "{accepted} of 600 mutated tokenizers accepted");
}

#[test]
fn a_huge_id_is_refused_before_anything_is_built() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/minimind/tokenizer.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for id in [400_000_000u64, 4_294_967_295] {
        v["model"]["vocab"]["a"] = json!(id);
        let e = Tokenizer::for_model(&v.to_string(), 6400).err().expect("refused");
        // Said by the stray id and the entries counted, not as id + 1 "tokens".
        let msg = e.to_string();
        assert!(msg.starts_with("tokenizer: the tokenizer has ") && msg.ends_with(&format!(" tokens, one of them with id {id}, but the model's vocabulary has only 6400 ids")), "{msg}");
        let e = Tokenizer::from_json(&v.to_string()).err().expect("refused on its own too");
        assert!(e.to_string().contains(&format!("has only {MAX_VOCAB}")), "{e}");
    }
    assert_eq!(Tokenizer::for_model(&text, 6400).unwrap().vocab_size(), 6400, "the real one still fits");
}

/// A GGUF file mutated where a lie does most harm: a count, length, dimension or offset in its header
/// set to an edge value, bytes flipped, cut or repeated.
fn mutate_gguf(rng: &mut Rng, original: &[u8], header_len: usize) -> Vec<u8> {
    let mut b = original.to_vec();
    for _ in 0..1 + rng.below(3) {
        match rng.below(5) {
            0 | 1 if b.len() >= 16 => {
                let at = rng.below(header_len.min(b.len()) - 8);
                let edge = [0, 1, 31, 32, 255, 1 << 31, u32::MAX as u64, 1 << 32, 1 << 40, 1 << 62, u64::MAX][rng.below(11)];
                b[at..at + 8].copy_from_slice(&edge.to_le_bytes());
            }
            2 => {
                let at = rng.below(b.len());
                b[at] = rng.next() as u8;
            }
            3 => b.truncate(rng.below(b.len())),
            4 => {
                let at = rng.below(header_len.min(b.len()));
                let end = (at + 1 + rng.below(64)).min(b.len());
                let slice = b[at..end].to_vec();
                b.splice(at..at, slice);
            }
            _ => {}
        }
        if b.len() < 8 {
            break;
        }
    }
    b
}

#[test]
fn mutated_gguf_files_are_read_or_refused_and_never_panic() {
    let original = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gguf/llama_q4_0/model.gguf")).unwrap();
    let header_len = attnscope::gguf::read_header(&original, original.len() as u64).unwrap().data_start as usize;
    let mut rng = Rng(0x6607_F00D);
    let mut accepted = 0;
    for n in 0..3000u64 {
        let bytes = mutate_gguf(&mut rng, &original, header_len);
        CASE.store(n, Ordering::Relaxed);
        let loaded = catch_unwind(AssertUnwindSafe(|| {
            let Ok(loaded) = attnscope::gguf::load(&bytes) else { return false };
            // A file that loads must run and give its tokenizer.
            let Ok(tokenizer) = Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size) else { return false };
            let ids = tokenizer.encode("ab").map(|e| e.ids).unwrap_or_default();
            let model = Model::new(loaded.config, loaded.weights);
            !ids.is_empty() && model.trace(&ids, None, 0, &RunOptions::default(), Selection::none()).is_ok()
        }));
        match loaded {
            Ok(ok) => accepted += ok as u64,
            Err(_) => panic!("GGUF case {n} panicked ({} bytes)", bytes.len()),
        }
    }
    // Some mutations leave the file readable (a flipped weight byte): those load and run.
    assert!(accepted > 100 && accepted < 3000, "{accepted} of 3000 loaded");
}
