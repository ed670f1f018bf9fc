//! The `attnscope` command: see `cli.rs`. A browser has no command line, so the wasm32 build of this
//! binary (which `cargo test --target wasm32-unknown-unknown` compiles) does nothing.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(attnscope::cli::main(std::env::args().skip(1).collect()));
}

#[cfg(target_arch = "wasm32")]
fn main() {}
