//! The `attnscope` command line: `trace` (docs/trace-contract.md) and `generate`.
//! Every failure is one line on stderr and a non-zero exit; a trace file is written whole or not at all.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::generate::{Generator, Sampling};
use crate::model::{AttentionPath, Interventions, Model, RunOptions};
use crate::tokenizer::Tokenizer;
use crate::trace::Selection;
use crate::weights::load_dir;
use crate::Error;

const USAGE: &str = "usage:
  attnscope trace --model DIR|FILE.gguf --input INPUT.json --out TRACE.safetensors
                  [--layers 0,1] [--heads 0,3] [--attention auto|naive|flash] [--tile N] [--no-causal]
                  [--ablate L:H[,L:H...]] [--logit-lens] [--head-logit [--target-token ID]]
  attnscope patch --model DIR|FILE.gguf --clean CLEAN.json --corrupt CORRUPT.json --target-token ID
                  --against-token ID --out PATCH.safetensors
  attnscope generate --model DIR|FILE.gguf --text TEXT [--bos] [--tokenizer tokenizer.json] [--max-new N]
                  [--temperature T] [--top-k K] [--top-p P] [--seed S]";

/// Runs the command; returns the process exit code.
pub fn main(args: Vec<String>) -> i32 {
    // A bug must still end as one line, not a "panicked at" message and a backtrace hint:
    // the hook stays silent and the payload becomes the error.
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(|| run(&args)).unwrap_or_else(|payload| {
        let msg = payload.downcast_ref::<&str>().map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        Err(Error::Io(format!("internal error: {msg}")))
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            // One line whatever the message holds, so scripts can show it as is.
            eprintln!("attnscope: {}", e.to_string().replace('\n', " "));
            if matches!(e, Error::Io(ref m) if m.starts_with("usage")) { 2 } else { 1 }
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceInput {
    ids: Vec<u32>,
    #[serde(default)]
    attention_mask: Option<Vec<u8>>,
    #[serde(default)]
    prefix_len: usize,
}

/// `--flag value` pairs and bare `--switch`es.
struct Flags(Vec<(String, Option<String>)>);

impl Flags {
    fn parse(args: &[String], switches: &[&str]) -> Result<Flags, Error> {
        let mut out = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let Some(name) = a.strip_prefix("--") else {
                return Err(usage(&format!("unexpected argument '{a}'")));
            };
            if switches.contains(&name) {
                out.push((name.to_string(), None));
            } else {
                let v = it.next().ok_or_else(|| usage(&format!("--{name} needs a value")))?;
                out.push((name.to_string(), Some(v.clone())));
            }
        }
        Ok(Flags(out))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    fn need(&self, name: &str) -> Result<&str, Error> {
        self.get(name).ok_or_else(|| usage(&format!("--{name} is required")))
    }

    fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, Error> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| usage(&format!("--{name} must be a number, got '{v}'"))),
        }
    }

    fn list(&self, name: &str) -> Result<Option<Vec<usize>>, Error> {
        self.get(name)
            .map(|v| v.split(',').map(|x| x.trim().parse().map_err(|_| usage(&format!("--{name} takes numbers like 0,2")))).collect())
            .transpose()
    }

    /// `--ablate 0:1,2:3`: (layer, head) pairs; whether they exist in the model is the model's to say.
    fn heads(&self, name: &str) -> Result<Vec<(usize, usize)>, Error> {
        let Some(v) = self.get(name) else { return Ok(Vec::new()) };
        v.split(',')
            .map(|pair| {
                let (l, h) = pair.trim().split_once(':').ok_or_else(|| usage(&format!("--{name} takes layer:head pairs like 0:1,2:3, not '{pair}'")))?;
                match (l.trim().parse(), h.trim().parse()) {
                    (Ok(l), Ok(h)) => Ok((l, h)),
                    _ => Err(usage(&format!("--{name} takes layer:head pairs of numbers like 0:1,2:3, not '{pair}'"))),
                }
            })
            .collect()
    }

    fn check_known(&self, known: &[&str]) -> Result<(), Error> {
        match self.0.iter().find(|(n, _)| !known.contains(&n.as_str())) {
            Some((n, _)) => Err(usage(&format!("unknown option --{n}"))),
            None => Ok(()),
        }
    }
}

fn usage(msg: &str) -> Error {
    Error::Io(format!("usage error: {msg} (see attnscope --help)"))
}

fn run(args: &[String]) -> Result<(), Error> {
    match args.first().map(String::as_str) {
        Some("trace") => trace(&args[1..]),
        Some("generate") => generate(&args[1..]),
        Some("patch") => patch(&args[1..]),
        Some("--help") | Some("-h") | Some("help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(usage(&format!("unknown command '{other}'"))),
        None => Err(usage("no command given")),
    }
}

fn read_text(path: &Path, what: &str) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| Error::Io(format!("cannot read {what} {}: {e}", path.display())))
}

/// A model directory (config.json and model.safetensors, `load_dir`) or a GGUF file, with the
/// tokenizer a GGUF file carries; after saying plainly when neither is there.
fn load_model(path: &Path) -> Result<(Model, Option<String>), Error> {
    if path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
        let bytes = std::fs::read(path).map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
        let loaded = crate::gguf::load(&bytes).map_err(|e| match e {
            Error::Checkpoint(s) => Error::Checkpoint(crate::Said { text: format!("{}: {}", path.display(), s.text), ..s }),
            other => other,
        })?;
        return Ok((Model::new(loaded.config, loaded.weights), Some(loaded.tokenizer_json)));
    }
    if !path.exists() {
        return Err(Error::Io(format!("model {} does not exist", path.display())));
    }
    if !path.is_dir() {
        return Err(Error::Io(format!("model {} is neither a directory (config.json, model.safetensors) nor a .gguf file", path.display())));
    }
    let (config, weights) = load_dir(path)?;
    Ok((Model::new(config, weights), None))
}

fn trace(args: &[String]) -> Result<(), Error> {
    let f = Flags::parse(args, &["no-causal", "logit-lens", "head-logit"])?;
    f.check_known(&["model", "input", "out", "layers", "heads", "attention", "tile", "no-causal", "ablate", "logit-lens", "head-logit", "target-token"])?;
    let (dir, input_path, out) = (PathBuf::from(f.need("model")?), PathBuf::from(f.need("input")?), PathBuf::from(f.need("out")?));
    let input: TraceInput = serde_json::from_str(&read_text(&input_path, "input")?)
        .map_err(|e| Error::Input(format!("{}: {e}", input_path.display())))?;
    if input.ids.is_empty() {
        return Err(Error::Input(format!("{}: ids is empty; give at least one token id", input_path.display())));
    }
    let tile = f.num("tile", crate::model::forward::DEFAULT_TILE)?;
    let path = match f.get("attention").unwrap_or("auto") {
        "auto" => AttentionPath::Auto,
        "naive" => AttentionPath::Naive,
        "flash" => AttentionPath::Flash { tile },
        other => return Err(usage(&format!("--attention is auto, naive or flash, not '{other}'"))),
    };
    let interventions = Interventions::ablating(f.heads("ablate")?);
    let target_token = f.get("target-token").map(|v| v.parse().map_err(|_| usage(&format!("--target-token must be a token id, got '{v}'")))).transpose()?;
    if target_token.is_some() && !f.has("head-logit") {
        return Err(usage("--target-token is the target of --head-logit; give --head-logit too"));
    }
    let (model, _) = load_model(&dir)?;
    let opts = RunOptions { causal: !f.has("no-causal"), path, probe: None, interventions };
    let selection = Selection {
        layers: f.list("layers")?,
        heads: f.list("heads")?,
        logit_lens: f.has("logit-lens"),
        head_logit: f.has("head-logit"),
        target_token,
        ..Selection::default()
    };
    let traced = model.trace(&input.ids, input.attention_mask.as_deref(), input.prefix_len, &opts, selection)?;
    write_whole(&out, &traced.trace.to_safetensors())?;
    eprintln!("attnscope: wrote {} tensors to {}", traced.trace.entries.len(), out.display());
    Ok(())
}

/// `attnscope patch`: activation patching (analysis/patching.rs) of the clean input into the corrupted one,
/// both in trace's input format (no mask, no prefix), written as `patch.*` tensors.
fn patch(args: &[String]) -> Result<(), Error> {
    let f = Flags::parse(args, &[])?;
    f.check_known(&["model", "clean", "corrupt", "target-token", "against-token", "out"])?;
    let read_ids = |flag: &str| -> Result<Vec<u32>, Error> {
        let path = PathBuf::from(f.need(flag)?);
        let input: TraceInput = serde_json::from_str(&read_text(&path, "input")?).map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
        if input.attention_mask.as_ref().is_some_and(|m| m.iter().any(|&v| v != 1)) || input.prefix_len != 0 {
            return Err(Error::Input(format!("{}: patching runs whole, unpadded inputs: give no attention_mask and prefix_len 0", path.display())));
        }
        Ok(input.ids)
    };
    let (clean, corrupt) = (read_ids("clean")?, read_ids("corrupt")?);
    let token = |flag: &str| -> Result<u32, Error> {
        let v = f.need(flag)?;
        v.parse().map_err(|_| usage(&format!("--{flag} must be a token id, got '{v}'")))
    };
    let (target, against) = (token("target-token")?, token("against-token")?);
    let out = PathBuf::from(f.need("out")?);
    let (model, _) = load_model(Path::new(f.need("model")?))?;
    let p = crate::analysis::patching::patch(&model, &clean, &corrupt, target, against, |_, _| {})?;
    let mut trace = crate::trace::Trace::default();
    trace.push("patch.clean_metric", &[1], vec![p.clean_metric]);
    trace.push("patch.corrupt_metric", &[1], vec![p.corrupt_metric]);
    trace.push("patch.resid_out", &[p.layers, p.positions], p.resid_out);
    trace.push("patch.head_context", &[p.layers, p.heads], p.head_context);
    write_whole(&out, &trace.to_safetensors())?;
    eprintln!("attnscope: wrote the patching of {} layers x {} positions and {} heads to {}", p.layers, p.positions, p.heads, out.display());
    Ok(())
}

/// Writes to a temporary file beside `path`, then renames: readers never see a partial file.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::Io(format!("cannot write {}: {e}", path.display()))
        })
}

fn generate(args: &[String]) -> Result<(), Error> {
    let f = Flags::parse(args, &["bos"])?;
    f.check_known(&["model", "text", "bos", "tokenizer", "max-new", "temperature", "top-k", "top-p", "seed"])?;
    let dir = PathBuf::from(f.need("model")?);
    let (model, own_tokenizer) = load_model(&dir)?;
    // --tokenizer, else the GGUF file's own, else the model directory's tokenizer.json.
    let tokenizer_json = match (f.get("tokenizer"), own_tokenizer) {
        (Some(path), _) => read_text(Path::new(path), "tokenizer")?,
        (None, Some(json)) => json,
        (None, None) => {
            let path = dir.join("tokenizer.json");
            if !path.exists() {
                return Err(Error::Io(format!("no tokenizer at {}; pass --tokenizer FILE", path.display())));
            }
            read_text(&path, "tokenizer")?
        }
    };
    let tokenizer = Tokenizer::for_model(&tokenizer_json, model.config.vocab_size)?;
    let sampling = Sampling {
        temperature: f.num("temperature", 0.0)?,
        top_k: f.num("top-k", 0)?,
        top_p: f.num("top-p", 1.0)?,
        seed: f.num("seed", 0)?,
    };
    if !(sampling.temperature >= 0.0 && sampling.top_p > 0.0 && sampling.top_p <= 1.0) {
        return Err(usage("--temperature must be >= 0 and --top-p in (0, 1]"));
    }
    let max_new: usize = f.num("max-new", 32)?;
    // --bos: the config's BOS token first, as MiniMind's training texts (and its eval of a pretrained model) start.
    let text = f.need("text")?;
    let prompt = match (f.has("bos"), model.config.bos_token_id) {
        (false, _) => tokenizer.encode(text)?.ids,
        (true, Some(bos)) => tokenizer.encode_with_bos(text, bos)?.ids,
        (true, None) if dir.is_dir() => return Err(Error::Input(format!("--bos: {}/config.json has no bos_token_id", dir.display()))),
        (true, None) => return Err(Error::Input(format!("--bos: {} has no bos_token_id that its tokenizer adds (tokenizer.ggml.add_bos_token)", dir.display()))),
    };
    let mut gen = Generator::new(&model, &prompt, sampling)?;
    let mut printed = tokenizer.decode(&prompt)?;
    print!("{printed}");
    for _ in 0..max_new {
        gen.step(&model, &RunOptions::default(), Selection::none())?;
        // Decode the whole text each time so multi-byte characters split over tokens print whole.
        let text = tokenizer.decode(&gen.ids)?;
        if let Some(rest) = text.strip_prefix(printed.as_str()) {
            print!("{rest}");
            use std::io::Write;
            let _ = std::io::stdout().flush();
            printed = text;
        }
    }
    println!();
    Ok(())
}
