//! MiniMind's forward pass as plain math on ndarray: one concept per file, MiniMind's own names.
//! Follows docs/minimind-semantics.md (MiniMind-3, `model/model_minimind.py`, Qwen3 layout).

pub mod attention;
pub mod block;
pub mod config;
pub mod exp;
pub mod flash;
pub mod forward;
pub mod generate;
pub mod interventions;
pub mod kv_cache;
pub mod lens;
pub mod linear;
pub mod moe;
pub mod par;
pub mod rms_norm;
pub mod rope;
pub mod scratch;
pub mod swiglu;
pub mod wide;

pub use forward::{AttentionPath, FlashProbe, Model, RunOptions};
pub use interventions::Interventions;
