// The JSON headers of a safetensors checkpoint's files (one model.safetensors, or the shards a
// model.safetensors.index.json names), read here in the worker (worker.js), not on the page: a
// header may hold up to 100 MB of JSON, and parsing that on the page's thread would freeze the tab.
// model_source.js reads each header's bytes (8 bytes giving its length, then the JSON) and hands
// them over; this says how long each file is and writes the one header of the file they join into.

// A whole safetensors header's listing of tensors, and the size of the file it describes: the
// header, then its tensors' data up to the last tensor's end; both null when the header is not one.
const NONE = { size: null, listing: null };
function readHeader(head) {
  let listing;
  try {
    listing = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(8)));
  } catch {
    return NONE;
  }
  if (!listing || typeof listing !== 'object' || Array.isArray(listing)) return NONE;
  let end = 0;
  for (const [name, tensor] of Object.entries(listing)) {
    if (name === '__metadata__') continue;
    const last = tensor?.data_offsets?.[1];
    if (!Number.isSafeInteger(last) || last < 0) return NONE;
    end = Math.max(end, last);
  }
  return { size: head.length + end, listing };
}

/**
 * `heads`: each file's whole header (its 8 bytes of length, then the JSON), in the files' order.
 * Returns {sizes, head, bases}: each file's size as its header describes it (null where the header
 * lists no tensors: the core explains a single file's, a shard's is refused by name), the header of
 * the file they join into (a single file keeps its own), and where each file's data begins in it.
 * Shards' listings are merged, each shard's data following the one before (its offsets moved by what
 * precedes it), the header padded with spaces to a multiple of 8 as safetensors writes it. With a
 * shard whose size is null, `head` and `bases` are null. `qkNorm`: whether the files hold Q/K norm
 * weights (as the core decides it where config.json does not say: src/weights.rs, has_qk_norm), for
 * the model's shape drawn before the core is in (model_source.js previewConfig); null when a header is not one.
 */
export function joinHeaders(heads) {
  const read = heads.map(readHeader);
  const sizes = read.map((r) => r.size);
  const qkNorm = sizes.includes(null) ? null : read.some(({ listing }) => Object.keys(listing).some((n) => n.endsWith('.self_attn.q_norm.weight') || n.endsWith('.self_attn.k_norm.weight')));
  if (heads.length === 1) return { sizes, head: heads[0], bases: [heads[0].length], qkNorm };
  if (sizes.includes(null)) return { sizes, head: null, bases: null, qkNorm };
  const listing = {};
  let at = 0;
  const starts = [];
  read.forEach(({ listing: own }, i) => {
    starts.push(at);
    for (const [name, tensor] of Object.entries(own)) {
      if (name === '__metadata__') continue;
      listing[name] = { ...tensor, data_offsets: tensor.data_offsets.map((o) => o + at) };
    }
    at += sizes[i] - heads[i].length;
  });
  const text = JSON.stringify(listing);
  const json = new TextEncoder().encode(text.padEnd(text.length + ((8 - (new TextEncoder().encode(text).length % 8)) % 8), ' '));
  const head = new Uint8Array(8 + json.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(json.length), true);
  head.set(json, 8);
  return { sizes, head, bases: starts.map((s) => head.length + s), qkNorm };
}
