//! The `attnscope` command: see `cli.rs`.

fn main() {
    std::process::exit(attnscope::cli::main(std::env::args().skip(1).collect()));
}
