//! llama.cpp's GGUF files (the format ollama, LM Studio and llama.cpp download), a sibling of the
//! safetensors loader in weights.rs behind the same result: a `Config`, `Weights` and a tokenizer.
//!
//! This file reads the container (GGUF v2 and v3: header, metadata key-values, tensor infos, the
//! aligned data section) and checks every count, length and offset against the file before anything
//! is allocated for it; `quant.rs` turns ggml's blocks into f32, `arch.rs` reads the model (llama,
//! qwen2, qwen3) from the metadata and the tensors, `vocab.rs` the tokenizer. Each refusal is one
//! sentence naming the problem (`Error::Checkpoint`, key `gguf.*`), said in the page's language too.

use std::collections::BTreeMap;

use crate::{Error, Said};

mod arch;
pub mod quant;
mod vocab;

pub use arch::{inspect, load, GgufModel, GgufSummary};
use quant::GgmlType;

/// "GGUF" read as a little-endian u32.
const MAGIC: u32 = 0x4655_4747;
/// Data alignment when `general.alignment` does not say.
const DEFAULT_ALIGNMENT: u64 = 32;
/// Most tensors and metadata entries a file may list: a model has a few thousand at most, and a
/// count of 2^60 must not become an allocation.
const MAX_ENTRIES: u64 = 1 << 20;
/// Most dimensions of a tensor (ggml's GGML_MAX_DIMS).
const MAX_DIMS: u32 = 4;

/// One metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Uint(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Array(Vec<Value>),
}

impl Value {
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Uint(v) => Some(v),
            Value::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(v),
            Value::Uint(v) => Some(v as f64),
            Value::Int(v) => Some(v as f64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// What a value is, for a sentence that says a key holds the wrong kind.
    fn kind(&self) -> &'static str {
        match self {
            Value::Uint(_) | Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Bool(_) => "a boolean",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
        }
    }
}

/// One tensor's entry in the file's table: its name, ggml's dims (ne[0] first, the fastest-varying),
/// type and where its data starts, relative to the data section.
#[derive(Clone, Debug)]
pub struct TensorInfo {
    pub name: String,
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    pub offset: u64,
    /// Bytes of its data, from its dims and type.
    pub bytes: u64,
}

impl TensorInfo {
    pub fn elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// Everything before the tensor data: the metadata, the tensor table, and where the data starts.
#[derive(Clone, Debug)]
pub struct Header {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
    pub data_start: u64,
}

impl Header {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

/// A refusal named `gguf.<key>` in the page's strings.
pub(crate) fn said(key: &'static str, args: Vec<(&'static str, String)>, text: String) -> Error {
    Error::Checkpoint(Said { key, args, text })
}

/// A reader over the header's bytes that refuses, by name, any read past what it has: past the
/// end of the file (truncated), or past the bytes given so far (`NeedMore`, when only the file's
/// head was handed over and the header runs on).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file_size: u64,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], Error> {
        let end = (self.at as u64).checked_add(n).filter(|&e| e <= self.file_size);
        let Some(end) = end else {
            return Err(said(
                "gguf.truncated",
                vec![("what", what.to_string()), ("at", self.at.to_string()), ("size", self.file_size.to_string())],
                format!("the file ends inside its header: {what} at byte {} runs past its end ({} bytes); the file is truncated or not a GGUF file", self.at, self.file_size),
            ));
        };
        if end > self.bytes.len() as u64 {
            return Err(Error::Input(format!("{NEED_MORE}{end}")));
        }
        let s = &self.bytes[self.at..end as usize];
        self.at = end as usize;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    fn string(&mut self, what: &str) -> Result<String, Error> {
        let len = self.u64(what)?;
        // The length is checked against the file before the bytes are taken: a 4 GB string in a
        // 100 MB file is a lie, not an allocation.
        let bytes = self.take(len, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| {
            said("gguf.notUtf8", vec![("what", what.to_string())], format!("{what} is not UTF-8 text; the file is damaged"))
        })
    }

    /// A value of GGUF type `ty`; arrays hold values of one type, and are not nested more than once.
    fn value(&mut self, ty: u32, key: &str, depth: u8) -> Result<Value, Error> {
        let what = || format!("the value of {key}");
        Ok(match ty {
            0 => Value::Uint(self.take(1, &what())?[0] as u64),
            1 => Value::Int(self.take(1, &what())?[0] as i8 as i64),
            2 => Value::Uint(u16::from_le_bytes(self.take(2, &what())?.try_into().expect("2")) as u64),
            3 => Value::Int(i16::from_le_bytes(self.take(2, &what())?.try_into().expect("2")) as i64),
            4 => Value::Uint(self.u32(&what())? as u64),
            5 => Value::Int(self.u32(&what())? as i32 as i64),
            6 => Value::Float(f32::from_bits(self.u32(&what())?) as f64),
            7 => Value::Bool(self.take(1, &what())?[0] != 0),
            8 => Value::Str(self.string(&what())?),
            9 if depth == 0 => {
                let item = self.u32(&what())?;
                let count = self.u64(&what())?;
                // Every item takes at least one byte: a count beyond the bytes left is a lie.
                let left = self.file_size.saturating_sub(self.at as u64);
                if count > left {
                    return Err(said(
                        "gguf.badCount",
                        vec![("what", what()), ("count", count.to_string()), ("left", left.to_string())],
                        format!("{} says it holds {count} items, more than the {left} bytes left in the file", what()),
                    ));
                }
                let mut items = Vec::with_capacity(count.min(1 << 16) as usize);
                for _ in 0..count {
                    items.push(self.value(item, key, depth + 1)?);
                }
                Value::Array(items)
            }
            10 => Value::Uint(self.u64(&what())?),
            11 => Value::Int(self.u64(&what())? as i64),
            12 => Value::Float(f64::from_bits(self.u64(&what())?)),
            other => {
                return Err(said(
                    "gguf.valueType",
                    vec![("key", key.to_string()), ("type", other.to_string())],
                    format!("metadata key {key} has value type {other}, which GGUF does not define; the file is damaged"),
                ))
            }
        })
    }
}

/// The prefix of `Error::Input` when `head` stops inside the header: the number after it is how
/// many bytes of the file's start `read_header` needs.
pub const NEED_MORE: &str = "the GGUF header runs on; give the file's first bytes up to ";

/// Reads a GGUF file's header from `head` (its first bytes, or all of it) and the file's size. The
/// tensor table must describe data inside the file, each tensor at an aligned offset, of a type
/// attnscope reads, with dims whose product is a whole number of blocks. Nothing is read of the data.
pub fn read_header(head: &[u8], file_size: u64) -> Result<Header, Error> {
    let mut r = Reader { bytes: head, at: 0, file_size };
    if file_size < 4 || head.get(..4).is_some_and(|m| u32::from_le_bytes(m.try_into().expect("4")) != MAGIC) {
        return Err(said("gguf.notGguf", vec![], "the file does not start with GGUF's magic bytes \"GGUF\": it is not a GGUF file".into()));
    }
    r.take(4, "the magic")?;
    let version = r.u32("the version")?;
    if !(2..=3).contains(&version) {
        return Err(said(
            "gguf.version",
            vec![("version", version.to_string())],
            format!("the file is GGUF version {version}; attnscope reads versions 2 and 3"),
        ));
    }
    let tensor_count = r.u64("the tensor count")?;
    let kv_count = r.u64("the metadata count")?;
    for (what, n) in [("tensors", tensor_count), ("metadata entries", kv_count)] {
        if n > MAX_ENTRIES {
            return Err(said(
                "gguf.tooMany",
                vec![("what", what.to_string()), ("count", n.to_string()), ("most", MAX_ENTRIES.to_string())],
                format!("the file says it has {n} {what}, more than the {MAX_ENTRIES} any model has; it is damaged"),
            ));
        }
    }
    let mut metadata = BTreeMap::new();
    for i in 0..kv_count {
        let key = r.string(&format!("metadata key {i}"))?;
        let ty = r.u32(&format!("the type of {key}"))?;
        let value = r.value(ty, &key, 0)?;
        metadata.insert(key, value);
    }
    let alignment = match metadata.get("general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some(v) => match v.as_u64() {
            Some(a) if a > 0 && a.is_power_of_two() && a <= 1 << 20 => a,
            _ => {
                return Err(said(
                    "gguf.alignment",
                    vec![("value", format!("{v:?}"))],
                    format!("general.alignment is {v:?}; it must be a power of two"),
                ))
            }
        },
    };
    let mut tensors = Vec::with_capacity(tensor_count.min(1 << 12) as usize);
    for i in 0..tensor_count {
        let name = r.string(&format!("the name of tensor {i}"))?;
        let n_dims = r.u32(&format!("the dimension count of {name}"))?;
        if n_dims == 0 || n_dims > MAX_DIMS {
            return Err(said(
                "gguf.dims",
                vec![("name", name.clone()), ("dims", n_dims.to_string())],
                format!("tensor {name} has {n_dims} dimensions; GGUF tensors have 1 to {MAX_DIMS}"),
            ));
        }
        let dims = (0..n_dims).map(|_| r.u64(&format!("the dimensions of {name}"))).collect::<Result<Vec<_>, _>>()?;
        let type_id = r.u32(&format!("the type of {name}"))?;
        let offset = r.u64(&format!("the offset of {name}"))?;
        let ty = GgmlType::from_id(type_id).map_err(|known| {
            let shown = if known.is_empty() { format!("type {type_id}") } else { known.to_string() };
            said(
                "gguf.tensorType",
                vec![("name", name.clone()), ("type", shown.clone()), ("supported", quant::SUPPORTED.to_string())],
                format!("tensor {name} is stored as {shown}, which attnscope does not read; these are: {}", quant::SUPPORTED),
            )
        })?;
        let elements = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).filter(|&n| n <= file_size.saturating_mul(8));
        let row = dims[0];
        let bytes = elements.and_then(|n| ty.row_bytes(row).map(|rb| (rb, n))).and_then(|(rb, n)| (n / row.max(1)).checked_mul(rb));
        let Some(bytes) = bytes.filter(|_| row > 0 && elements.is_some_and(|n| n > 0)) else {
            let (per, _) = ty.block();
            return Err(said(
                "gguf.tensorShape",
                vec![("name", name.clone()), ("dims", format!("{dims:?}")), ("type", ty.name().to_string()), ("block", per.to_string())],
                format!("tensor {name} has dims {dims:?}, which no {} tensor of this file can have (rows of whole {per}-element blocks, inside the file)", ty.name()),
            ));
        };
        if offset % alignment != 0 {
            return Err(said(
                "gguf.misaligned",
                vec![("name", name.clone()), ("offset", offset.to_string()), ("alignment", alignment.to_string())],
                format!("tensor {name} starts at offset {offset}, not a multiple of the file's alignment {alignment}"),
            ));
        }
        tensors.push(TensorInfo { name, dims, ty, offset, bytes });
    }
    let data_start = (r.at as u64).div_ceil(alignment) * alignment;
    let data_size = file_size.saturating_sub(data_start);
    for t in &tensors {
        if t.offset.checked_add(t.bytes).is_none_or(|end| end > data_size) {
            return Err(said(
                "gguf.outside",
                vec![("name", t.name.clone()), ("offset", t.offset.to_string()), ("bytes", t.bytes.to_string()), ("data", data_size.to_string())],
                format!(
                    "tensor {}'s {} bytes at offset {} lie outside the file's {data_size} bytes of tensor data: the file is truncated or damaged",
                    t.name, t.bytes, t.offset
                ),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(t) = tensors.iter().find(|t| !seen.insert(t.name.as_str())) {
        return Err(said("gguf.duplicate", vec![("name", t.name.clone())], format!("tensor {} is listed twice", t.name)));
    }
    Ok(Header { version, metadata, tensors, data_start })
}

/// How many of a file's first bytes `read_header` needs, or None when `head` already holds the
/// whole header (or the header is refused for another reason, which `read_header` will say).
pub fn header_needs(head: &[u8], file_size: u64) -> Option<u64> {
    match read_header(head, file_size) {
        Err(Error::Input(m)) => m.strip_prefix(NEED_MORE).and_then(|n| n.parse().ok()),
        _ => None,
    }
}

/// A tensor's data as f32, row-major over ggml's dims reversed (a matrix of ne = [in, out] comes out
/// `[out, in]`, as nn.Linear holds it). `bytes` is the whole file.
pub fn tensor_f32(header: &Header, t: &TensorInfo, bytes: &[u8]) -> Vec<f32> {
    let start = (header.data_start + t.offset) as usize;
    let data = &bytes[start..start + t.bytes as usize];
    let mut out = Vec::with_capacity(t.elements() as usize);
    quant::dequantize(t.ty, data, &mut out);
    out
}

/// Looks a key up, refusing by name a missing one or one of the wrong kind.
fn required<'h, T>(header: &'h Header, key: &str, read: impl Fn(&'h Value) -> Option<T>, kind: &str) -> Result<T, Error> {
    match header.get(key) {
        None => Err(said("gguf.missingKey", vec![("key", key.to_string())], format!("the file's metadata has no {key}"))),
        Some(v) => read(v).ok_or_else(|| {
            said(
                "gguf.keyKind",
                vec![("key", key.to_string()), ("kind", kind.to_string()), ("found", v.kind().to_string())],
                format!("metadata key {key} holds {}, not {kind}", v.kind()),
            )
        }),
    }
}
