// The views' tab labels in 简体中文, part of zh.js, kept apart because every page needs them, in
// English too: a link may name its view by its Chinese tab label ("注意力图"), and state.js reads
// it with these (its VIEW_ALIASES) before any Chinese is fetched.

export default {
  'view.stepper': '主流程',
  'view.attention': '注意力图',
  'view.grid': '所有注意力头',
  'view.masks': '掩码',
  'view.lines': '连线图',
  'view.qk': 'Q·K',
  'view.rope': 'RoPE',
  'view.scale': '缩放',
  'view.gqa': 'MHA / GQA / MQA',
  'view.decode': 'KV Cache',
  'view.flash': 'FlashAttention',
  'view.ffn': 'FFN',
  'view.output': '输出',
  'view.lessons': '课程',
  'view.overview': '总览',
  'view.compare': '比较两个输入',
  'view.ablate': '关掉注意力头',
  'view.lens': '逐层预测',
  'view.attribution': '逐头归因',
  'view.circuit': '寻找电路',
  'view.patch': '激活修补',
};
