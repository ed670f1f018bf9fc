// The page's terms, in English and 简体中文, as the tutorials in shared/seeds use them. strings.js
// follows this table and tests/unit/strings.test.mjs holds it to it: every term has its one way of
// being written in each language (`en`, `zh`), the wordings it replaces are refused (`notEn`,
// `notZh`), and a Chinese sentence keeps no Latin word but the names in LATIN_IN_ZH.

export const TERMS = [
  { id: 'query', en: 'query (Q)', zh: 'Q（查询）', notZh: [/查询\s*[ij]\b/, /查询\s*vs/i] },
  { id: 'key', en: 'key (K)', zh: 'K（键）', notZh: [/(?<!\{)\bkeys?\b(?!\})/] },
  { id: 'value', en: 'value (V)', zh: 'V（值）', notZh: [/(?<!\{)\bvalues?\b(?!\})/] },
  { id: 'scores', en: 'scores', zh: '缩放后的匹配分数', notZh: [/^scores(?!\s*[[=+])/] },
  // The raw stage (Q × Kᵀ before ÷ √d, parts/controls.js) and only it is 原始匹配分数.
  { id: 'raw', en: 'raw match scores', zh: '原始匹配分数' },
  { id: 'probs', en: 'attention weights', zh: '注意力权重', notZh: [/\bprobs\b(?!\[)/] },
  { id: 'weight', en: 'weight (one attention weight, in a tooltip)', zh: '权重' },
  { id: 'position', en: 'token 2 (counting from 0)', zh: '位置 2（从 0 开始数）', notZh: [/第 \{\w+\} 个 token/], notEn: [/\btoken \{i\}(?! \(counting from 0)/i] },
  // Layers count from 0 as heads do (MiniMind's layers[0]): 层 0 beside 头 0, never an ordinal 第 0 层.
  // A head is named 层 2 头 5 in a label and 层 2 的头 5 in a sentence, never with 、 or ， between.
  { id: 'layer', en: 'layer 0', zh: '层 0', notZh: [/第 \{l\} 层/, /层 \{\w+\}[、，]头/] },
  { id: 'causal', en: 'causal mask (Causal mask at the start of a sentence)', zh: '因果掩码（Causal Mask）', notZh: [/causal mask/, /\bmask\b(?!\))/], notEn: [/Causal Mask/, /causal Mask/] },
  { id: 'padding', en: 'padding mask', zh: 'padding 掩码', notEn: [/Padding Mask/, /padding Mask/] },
  { id: 'attention', en: 'attention', zh: '注意力', notZh: [/\battention\b(?!_)/i] },
  { id: 'ffn', en: 'FFN', zh: '前馈网络（FFN）' },
  { id: 'core', en: 'the core', zh: '模型代码', notZh: [/内核/, /计算核心/] },
  { id: 'that-is', en: 'i.e.', zh: '即', notZh: [/读作/] },
  { id: 'attend', en: 'attends to', zh: '关注', notZh: [/听/] },
  { id: 'tiles', en: 'tile by tile', zh: '逐块处理', notZh: [/一次走过一块/] },
  { id: 'own-model', en: 'your own model', zh: '自定义模型', notZh: [/^自己的$/] },
  { id: 'builtin', en: 'Tiny MiniMind', zh: '内置 MiniMind', notZh: [/迷你\s*MiniMind/] },
  { id: 'hidden', en: 'hidden size', zh: '隐藏维度', notZh: [/\bhidden\b/] },
  { id: 'induction', en: 'induction head', zh: '归纳头', notZh: [/感应头|诱导头/] },
  { id: 'duplicate', en: 'duplicate-token head', zh: '同词回看头' },
];

// Latin words a Chinese sentence may keep: code names, the tutorials' own technical words, units and
// file formats. Single letters (math: d, T, Q, K, V), identifiers (q_proj, config.json, f32) and
// <special> tokens are code too and always allowed.
export const LATIN_IN_ZH = [
  'attnscope', 'MiniMind', 'Qwen3', 'Llama', 'BERT', 'WebAssembly', 'WebGPU', 'GPU', 'CPU', 'English',
  'token', 'padding', 'softmax', 'Causal', 'Mask', 'Query', 'Key', 'Value', 'GQA', 'MHA', 'MQA', 'KV', 'Cache',
  'MoE', 'top-k', 'top-p', 'JSON',
  'RoPE', 'YaRN', 'SwiGLU', 'SiLU', 'RMSNorm', 'RMS', 'Norm', 'FFN', 'FlashAttention', 'logits', 'prefill', 'id', 'ids',
  'gate', 'up', 'down', 'act', 'ctx', 'nH', 'nKV', 'max', 'exp', 'silu', 'sigmoid', 'mean', 'concat', 'triu', 'cos', 'sin',
  'log2', 'batch', 'ms', 'SVG', 'PNG', 'HTML', 'URL', 'HTTP', 'http', 'https', 'Home', 'End', 'Tab', 'Enter', 'Escape', 'KiB', 'MiB', 'GiB', 'Access-Control-Allow-Origin', 'CORS',
  'Softmax', 'Padding', 'Logits', 'Wq', 'Wk', 'Wv', 'Wo', 'Wlm', 'safetensors', 'scores', 'mask', 'BPE',
  'True', 'False', 'true', 'false', 'null', 'NaN', 'Hugging', 'Face', 'Hub', 'Python', 'KL', 'nats', 'logit', 'lens', 'BOS',
  'GGUF', 'gguf', 'llama', 'PyPI', 'Apache-2.0', 'Content-Length', 'UTF-8', 'MB', 'attn-scope',
];

/** The Latin words of a Chinese sentence that are not allowed: placeholders, formulas' identifiers and
 * the allowed names taken out first. A formula's identifiers are words followed by [, ( or =. */
export function strayLatin(text) {
  const allowed = new Set(LATIN_IN_ZH);
  const stripped = text
    .replace(/\{\w+\}/g, ' ')
    .replace(/《[^》]*》/g, ' ') // a title, quoted as it is written
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/<[|\w]+>/g, ' ')
    .replace(/[A-Za-z_][\w.]*(?=\s*[[(=])/g, ' ');
  return (stripped.match(/[A-Za-z][\w.\-]*/g) ?? []).filter((w) => !(w.length === 1 || /[_.\d]/.test(w) || allowed.has(w)));
}
