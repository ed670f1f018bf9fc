// The core's limits on a model and on one run: the page's copy of src/model/config.rs's MAX_* consts,
// and the one place in www/ that writes them (state.js clamps a link's config to them, the token chips
// and the induction probe stop at MAX_TOKENS). tests/unit/limits.test.mjs reads config.rs and fails
// when the two differ, so a limit changes on both sides or on neither.
export const MAX_HIDDEN = 8192; // hidden_size
export const MAX_LAYERS = 64; // num_hidden_layers
export const MAX_HEADS = 256; // num_attention_heads (and num_key_value_heads)
export const MAX_HEAD_DIM = 1024; // head_dim
export const MAX_INTERMEDIATE = 65_536; // intermediate_size, moe_intermediate_size
export const MAX_EXPERTS = 256; // num_experts
export const MAX_VOCAB = 262_144; // vocab_size
export const MAX_TOKENS = 8192; // tokens in one run
export const MAX_WEIGHT_BYTES = 2 ** 31; // f32 weights a model may hold (Rust: 2 << 30)
