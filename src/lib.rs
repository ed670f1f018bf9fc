//! attnscope: MiniMind's forward pass, step by step, for people who want to see attention happen.
//!
//! Layers, from the bottom: `model` (pure math on ndarray, MiniMind's names), `weights` (safetensors
//! in, seeded random weights), `trace` (every intermediate by its contract name), `tokenizer`, then
//! the front doors: `cli` for the `attnscope` command and `wasm_api` for the browser.

pub mod analysis;
pub mod gguf;
pub mod model;
pub mod tokenizer;
pub mod trace;
pub mod weights;

#[cfg(feature = "gpu")]
pub mod gpu;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod wasm_api;

pub use model::config::Config;

/// Every failure attnscope reports. The message is meant for a person: it names the problem.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A config.json attnscope refuses, said so that the page can put it in the reader's language.
    Config(Said),
    Weights(String),
    /// A checkpoint the core refuses, said so that the page can put it in the reader's language.
    Checkpoint(Said),
    /// A config or a run over a memory budget or a length limit, said so that the page can put it in the
    /// reader's language.
    Budget(Said),
    /// A request the model cannot serve (an induction probe longer than its vocabulary or positions
    /// allow), said for the page as `Budget` is.
    Refused(Said),
    Input(String),
    /// A tokenizer.json attnscope cannot read or use with the model, said for the page.
    Tokenizer(Said),
    Io(String),
    /// The GPU path failed (no adapter, device lost, a validation error): callers fall back to the CPU.
    Gpu(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Config(s) => write!(f, "bad config: {}", s.text),
            Error::Weights(m) => write!(f, "bad weights: {m}"),
            Error::Checkpoint(s) => write!(f, "bad weights: {}", s.text),
            Error::Budget(s) | Error::Refused(s) => write!(f, "bad input: {}", s.text),
            Error::Input(m) => write!(f, "bad input: {m}"),
            Error::Tokenizer(s) => write!(f, "tokenizer: {}", s.text),
            Error::Io(m) => write!(f, "{m}"),
            Error::Gpu(m) => write!(f, "GPU: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Where a JSON file (config.json, tokenizer.json) stops parsing, for a refusal the page says in its
/// own words rather than serde's: `cut` is whether the text ended before its JSON did (a file cut
/// short), and `args` hold the line and column, plus serde's own sentence as `why` for the CLI.
pub fn json_fault(e: &serde_json::Error) -> (bool, Vec<(&'static str, String)>) {
    let cut = e.classify() == serde_json::error::Category::Eof;
    (cut, vec![("line", e.line().to_string()), ("column", e.column().to_string()), ("why", e.to_string())])
}

/// A refusal with a name: `key` picks its sentence in the page's strings (`core.<key>` in
/// www/strings.js), `args` fill it (sizes and counts as plain integers, so the page writes them in
/// its own units), and `text` is the English sentence the CLI prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub key: &'static str,
    pub args: Vec<(&'static str, String)>,
    pub text: String,
}
