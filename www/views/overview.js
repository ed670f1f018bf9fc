// The overview, the page's landing view: the loaded model drawn as it really is, from the core's
// resolved config (its own layer count, heads, KV heads, head_dim, hidden, FFN and vocabulary
// sizes). Its first screen is the path of the live sentence: its tokens → embedding → the stack of
// N decoder layers, each [RMSNorm → attention → residual → RMSNorm → SwiGLU FFN → residual] in one
// line → final norm → logits → the predicted next token (the core's softmax of the last position's
// logits, its `top` call, as the Output view does), with, under it, the text continued by the model
// (parts/continue_text.js). On each arrow, the shape of what the step hands on, as MiniMind prints
// it ([1, T, H]). Under the first screen, one layer in detail (every step, a mixture-of-experts
// model's router, top-k and experts), the others a row of buttons behind it, so 64 layers stay an
// overview; then a short route for a first visit; then the model's sizes and how it differs from
// the tutorials' MiniMind. Every block is a link to the step or view that explains it.
// While the first checkpoint's weights arrive, the diagram draws from its config (app.preview),
// with T for the number of tokens, each box already at its final size (nothing moves when the
// numbers arrive: the token row is one line that scrolls sideways, the prediction box and the
// route's head line hold their place).

import { el, svg } from '../parts/dom.js';
import { fixed, quoted, tokenText, shapeLabel, percent, spaced } from '../parts/format.js';
import { range } from '../parts/controls.js';
import { modelName } from '../panels/model_panel.js';
import { candidateNotes } from '../parts/prediction.js';
import { clearestHeads, headRoles } from '../parts/head_roles.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { continueText } from '../parts/continue_text.js';
import { MINIMIND3 } from './gqa.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';
import { aheadNumbers, aheadArrived } from '../page/ahead.js';

// The page may show this view before any run: it needs only a config (page/screen.js refresh()).
export const previews = true;

const TOP = 3; // candidates shown for the next token
const TOKENS_AT_EACH_END = 8; // a long input shows its first and last tokens
const ELIDED_AT_LEAST = 8; // ... when that leaves out this many or more; a few more chips cost less than a gap
const ROUTE = ['lessons', 'stepper', 'attention', 'grid'];
const STACK_DRAWN = 3; // at most this many cards drawn behind the detailed layer
// Unfinished sentences whose next word the built-in model gets (To be or not to → be 37 %, Good
// morning, how are → you 66 %, 今天天气很 → 好 46 %): offered when the text is a finished sentence and the prediction is only its ending.
const UNFINISHED = { en: ['To be or not to', 'Good morning, how are'], zh: ['今天天气很', '从前有一个'] };

// A link that changes only the fields it names (page/address.js: plain fields change the current state).
const link = (fields) => `#${new URLSearchParams(fields)}`;

// A box of the diagram; `key` names it for tests and for keeping keyboard focus across redraws.
function block(key, href, title, sub, kind = '') {
  return el('a', { className: `ov-block ${kind}`.trim(), href, dataset: { block: key } }, el('span', { className: 'ov-title' }, title), sub && el('span', { className: 'ov-sub' }, sub));
}

// The arrow between two boxes, labelled with the shape of what flows along it.
function arrow(shape, note = null) {
  return el(
    'div',
    { className: 'ov-arrow' },
    el('span', { className: 'ov-arrow-stem', attrs: { 'aria-hidden': 'true' } }),
    svg('svg', { class: 'ov-arrow-head', width: 12, height: 7, viewBox: '0 0 12 7', 'aria-hidden': 'true' }, svg('path', { d: 'M0 0H12L6 7Z' })),
    el('span', { className: 'shape', dataset: { shape: shapeLabel(shape) } }, shapeLabel(shape)), note && el('span', { className: 'ov-arrow-note' }, note),
  );
}

// A step inside the attention or FFN card: its name and the shapes it produces.
function step(key, href, name, shapes = []) {
  return el(
    'li',
    {},
    el('a', { className: 'ov-step', href, dataset: { block: key } }, el('span', { className: 'ov-step-name' }, name), shapes.map(([label, shape]) => el('span', { className: 'shape', dataset: { shape: shapeLabel(shape) } }, label ? `${label} ${shapeLabel(shape)}` : shapeLabel(shape)))),
  );
}

function steps(list) {
  const items = list.filter(Boolean);
  items.slice(1).forEach((item) => item.prepend(el('span', { className: 'ov-step-arrow', attrs: { 'aria-hidden': 'true' } }, '→')));
  return el('ol', { className: 'ov-steps' }, items);
}

// The sentence that says how the heads share keys and values: MHA, GQA or MQA.
function headsText(c) {
  const nH = c.num_attention_heads;
  const nKV = c.num_key_value_heads;
  const kind = nKV === nH ? 'mha' : nKV === 1 ? 'mqa' : 'gqa';
  return t(`overview.heads.${kind}`, { heads: nH, kv: nKV, rep: nH / nKV, d: c.head_dim });
}

// The overview's numbers for the current run: its tokens, the next token's TOP candidates (the core's
// softmax of the last position's logits, its `top` call, as the Output view does), the top token as
// text (null for a piece of a character's bytes) and the clearest head, which the route's attention
// map opens on ({l, h, role, score}). null when a newer input came meanwhile. tools/ahead.mjs writes
// the built-in model's numbers for its opening sentences with this same function (page/ahead.js).
export async function overviewNumbers(app) {
  const { state } = app;
  // The tokens as this run began: a language switch can swap the sentence while it awaits.
  const { text } = state;
  const { ids, pieces, special } = state.tokens;
  const T = pieces.length;
  const [logits, roles] = await Promise.all([app.tensors(['logits']).then((found) => found.get('logits')), headRoles(app).catch(() => null)]);
  if (state.tokens.pieces !== pieces || logits.shape[0] !== T) return null; // a newer run redraws
  const V = logits.shape[1];
  const top = await app.call('top', { logits: logits.data.slice((T - 1) * V, T * V), k: TOP });
  const next = await app.call('decode', { ids: [top[0].id] });
  const [best] = roles ? clearestHeads(roles, 1) : [];
  return {
    text,
    ids: [...ids],
    pieces: [...pieces],
    special: special ? [...special] : null,
    top: top.map(({ id, piece, p }) => ({ id, piece, p })),
    next: next.includes('\uFFFD') ? null : next,
    head: best ? { l: best.l, h: best.h, role: best.r.role, score: best.r.score } : null,
  };
}

export function mount(root, app) {
  const { state } = app;
  const diagram = el('div', { className: 'ov-diagram' });
  const prediction = el('div', { className: 'ov-prediction', attrs: { 'aria-live': 'polite' } });
  // Kept across redraws, right under the prediction: the text written goes on while the reader picks a layer.
  const writer = continueText(app);
  // What the marks in the prediction mean and what to do next with it.
  const next = el('div', { className: 'ov-after' });
  const start = route();
  root.append(diagram);
  const updates = latest();

  // The sizes the diagram draws: the loaded model's, or while the first one loads, its config's.
  const config = () => app.model ?? app.preview.config;
  const live = () => app.phase === 'ready' && app.run !== null;

  function facts(c) {
    const list = [
      ['layers', c.num_hidden_layers],
      ['heads', c.num_attention_heads],
      ['kvHeads', c.num_key_value_heads],
      ['headDim', c.head_dim],
      ['hidden', c.hidden_size],
      c.use_moe ? ['experts', t('overview.expertsFact', { k: c.num_experts_per_tok, e: c.num_experts, i: c.moe_intermediate_size })] : ['ffn', c.intermediate_size],
      ['vocab', c.vocab_size],
    ];
    return el('dl', { className: 'ov-facts' }, list.map(([key, value]) => el('div', { className: 'ov-fact', dataset: { fact: key } }, el('dt', {}, t(`overview.fact.${key}`)), el('dd', {}, String(value)))));
  }

  // The input's tokens as the tokenizer cut them (`numbers`: the run's, or those computed ahead;
  // null while neither is here); a long input shows both ends.
  function tokens(T, numbers) {
    const pieces = numbers?.pieces;
    const mask = numbers?.mask ?? [];
    const shown = T >= 2 * TOKENS_AT_EACH_END + ELIDED_AT_LEAST ? [...range(TOKENS_AT_EACH_END), null, ...range(TOKENS_AT_EACH_END).map((i) => T - TOKENS_AT_EACH_END + i)] : range(T);
    const chips = shown.map((i) => (i === null ? el('span', { className: 'ov-more' }, t('overview.tokensMore', { n: T - 2 * TOKENS_AT_EACH_END })) : el('span', { className: `ov-token${numbers.special?.[i] ? ' special' : ''}${mask[i] === 0 ? ' padded' : ''}`, dataset: { index: i }, title: mask[i] === 0 ? t('overview.tokenPadded') : undefined }, tokenText(pieces[i]))));
    const focusInput = () => {
      const input = document.getElementById('text');
      input.scrollIntoView({ block: 'center' });
      input.focus();
    };
    // One line that scrolls sideways, there before the tokens are: the box never grows when they come.
    const row = el('span', { className: 'ov-token-row' }, numbers ? chips : el('span', { className: 'ov-token ov-token-waiting', attrs: { 'aria-hidden': 'true' } }, '…'));
    scrollFade(row);
    return el(
      'button',
      { type: 'button', className: 'ov-block ov-tokens', dataset: { block: 'tokens', figure: '' }, on: { click: focusInput } },
      el('span', { className: 'ov-tokens-head' }, el('span', { className: 'ov-title' }, t('overview.tokens')), el('span', { className: 'ov-sub' }, numbers ? t('overview.tokensSub', { n: T }) : t('overview.tokensWaiting'))),
      row,
    );
  }

  // The stack of layers on the first screen: each layer's path in one line (norm, attention, its
  // residual, norm, FFN, its residual), every part a link to its step; the detail is under the first screen.
  function stack(c, T) {
    const L = c.num_hidden_layers;
    const l = Math.min(state.layer, L - 1);
    const at = (fields) => link({ ...fields, layer: l });
    const part = (key, href, text, kind = '', title = undefined) => el('li', {}, el('a', { className: `ov-part ${kind}`.trim(), href, title, dataset: { key: `part-${key}` } }, text));
    const plus = (key, step, sum) => part(key, at({ view: 'stepper', step }), '+', 'ov-part-plus', `${t('overview.residual')}: ${sum}`);
    const parts = [
      part('input_norm', at({ view: 'stepper', step: 'input_norm' }), 'RMSNorm', 'ov-part-norm'),
      part('attention', at({ view: 'attention' }), t('overview.attention'), 'ov-part-attn'),
      plus('attn_residual', 'attn_residual', 'x + attn.out'),
      part('post_norm', at({ view: 'stepper', step: 'post_norm' }), 'RMSNorm', 'ov-part-norm'),
      part('ffn', at({ view: 'ffn' }), t(c.use_moe ? 'overview.moe' : 'overview.ffn'), 'ov-part-ffn'),
      plus('layer_out', 'layer_out', 'x + ffn.out'),
    ];
    parts.slice(1).forEach((item) => item.prepend(el('span', { className: 'ov-step-arrow', attrs: { 'aria-hidden': 'true' } }, '→')));
    const inside = () => diagram.querySelector('.ov-layer')?.scrollIntoView({ block: 'start' });
    return el(
      'div',
      { className: 'ov-stack', dataset: { block: 'stack', stack: String(Math.min(L - 1, STACK_DRAWN)) } },
      el('div', { className: 'ov-stack-head' }, el('span', { className: 'ov-title' }, t(L === 1 ? 'overview.stackOne' : 'overview.stack', { n: L }))),
      el('div', { className: 'ov-stack-body' }, el('ol', { className: 'ov-parts', attrs: { 'aria-label': t('overview.stackParts') } }, parts), el('button', { type: 'button', className: 'link ov-inside-link', dataset: { key: 'inside' }, on: { click: inside } }, t('overview.inside', { l }))),
    );
  }

  function attention(c, l, T) {
    const { num_attention_heads: nH, num_key_value_heads: nKV, head_dim: d, hidden_size: H } = c;
    const at = (fields) => link({ ...fields, layer: l });
    return el(
      'div',
      { className: 'ov-card ov-attn' },
      el('a', { className: 'ov-card-head', href: at({ view: 'attention' }), dataset: { block: 'attention' } }, el('span', { className: 'ov-title' }, t('overview.attention')), el('span', { className: 'ov-sub' }, headsText(c))),
      steps([
        step('qkv', at({ view: 'stepper', step: 'qkv' }), 'q_proj · k_proj · v_proj', [['Q', [T, nH, d]], ['K, V', [T, nKV, d]]]),
        c.qk_norm && step('qk_norm', at({ view: 'stepper', step: 'qk_norm' }), 'q_norm · k_norm'),
        step('rope', at({ view: 'rope' }), 'RoPE'),
        step('kv_cache', at({ view: 'decode' }), t('view.decode')),
        nKV < nH && step('repeat_kv', at({ view: 'gqa' }), 'repeat_kv', [['K, V', [T, nH, d]]]),
        step('scores', at({ view: 'qk' }), 'Q·Kᵀ', [['', [nH, T, T]]]),
        step('scale', at({ view: 'scale' }), `÷ √${d}`),
        step('masks', at({ view: 'masks' }), t('overview.masks')),
        step('softmax', at({ view: 'attention', stage: 'probs' }), 'softmax', [['', [nH, T, T]]]),
        step('context', at({ view: 'stepper', step: 'context' }), t('overview.context'), [['', [T, nH, d]]]),
        step('o_proj', at({ view: 'stepper', step: 'attn_out' }), 'o_proj', [['', [T, H]]]),
      ]),
      el(
        'p',
        { className: 'ov-card-links' },
        [
          ['grid', { view: 'grid' }, t('overview.allHeads', { n: c.num_hidden_layers * nH, layers: c.num_hidden_layers, heads: nH })],
          ['gqa', { view: 'gqa' }, t('view.gqa')],
          ['lines', { view: 'lines' }, t('view.lines')],
          ['flash', { view: 'flash' }, t('overview.flash')],
        ].map(([key, fields, text]) => el('a', { href: at(fields), dataset: { block: key } }, text)),
      ),
    );
  }

  // MiniMind's MOEFeedForward: the card opens the routing view (views/moe.js), its steps the pipeline's.
  function moe(c, l, T) {
    const { num_experts: E, num_experts_per_tok: k, moe_intermediate_size: I, hidden_size: H } = c;
    const href = link({ view: 'ffn', layer: l });
    const at = (s) => link({ view: 'stepper', step: s, layer: l });
    return el(
      'div',
      { className: 'ov-card ov-ffn ov-moe' },
      el('a', { className: 'ov-card-head', href, dataset: { block: 'ffn' } }, el('span', { className: 'ov-title' }, t('overview.moe')), el('span', { className: 'ov-sub' }, t('overview.moeSub', { e: E, k, h: H, i: I }))),
      steps([
        step('router', at('ffn_router'), t('overview.moeRouter'), [['', [T, E]]]),
        step('router_softmax', at('ffn_router'), 'softmax', [['', [T, E]]]),
        step('top_k', at('ffn_experts'), `top-${k}`, [['', [T, k]]]),
        step('experts', at('ffn_experts'), t('overview.moeExperts', { k }), [['', [T, k, H]]]),
        step('weighted_sum', at('ffn_moe_out'), t('overview.moeSum'), [['', [T, H]]]),
      ]),
    );
  }

  function ffn(c, l, T) {
    if (c.use_moe) return moe(c, l, T);
    const { intermediate_size: I, hidden_size: H } = c;
    const at = (fields) => link({ ...fields, layer: l });
    return el(
      'div',
      { className: 'ov-card ov-ffn' },
      el('a', { className: 'ov-card-head', href: at({ view: 'ffn' }), dataset: { block: 'ffn' } }, el('span', { className: 'ov-title' }, t('overview.ffn')), el('span', { className: 'ov-sub' }, t('overview.ffnSub', { h: H, i: I }))),
      steps([
        step('gate_up', at({ view: 'stepper', step: 'ffn_gate_up' }), 'gate_proj · up_proj', [['', [T, I]]]),
        step('act', at({ view: 'stepper', step: 'ffn_act' }), 'SiLU(gate) × up', [['', [T, I]]]),
        step('down', at({ view: 'stepper', step: 'ffn_out' }), 'down_proj', [['', [T, H]]]),
      ]),
    );
  }

  // One decoder layer in detail, with the others as a stack of buttons that pick which is drawn.
  function layer(c, T) {
    const L = c.num_hidden_layers;
    const l = Math.min(state.layer, L - 1);
    const H = c.hidden_size;
    const at = (fields) => link({ ...fields, layer: l });
    const pick = el(
      'div',
      { className: 'ov-layer-pick', attrs: { role: 'group', 'aria-label': t('overview.pickLayer') } },
      range(L).map((i) =>
        el('button', { type: 'button', className: 'ov-layer-button', dataset: { layer: i, key: `layer-${i}` }, attrs: { 'aria-pressed': String(i === l), 'aria-label': t('overview.layerN', { l: i }) }, on: { click: () => app.set({ layer: i }) } }, String(i)),
      ),
    );
    // The rail on the left of each sublayer is its residual path: x skips the block and is added back.
    const sublayer = (norm, body) => el('div', { className: 'ov-sublayer' }, norm, arrow([T, H]), body);
    const residual = (key, step, sum) =>
      el('a', { className: 'ov-residual', href: at({ view: 'stepper', step }), dataset: { block: key } }, el('span', { className: 'ov-plus', attrs: { 'aria-hidden': 'true' } }, '+'), el('span', {}, spaced(t('overview.residual')), el('code', {}, sum)));
    return el(
      'section',
      { className: 'ov-layer', dataset: { stack: String(Math.min(L - 1, STACK_DRAWN)), layer: String(l) }, attrs: { 'aria-label': t('overview.layerN', { l }) } },
      el('div', { className: 'ov-layer-head' }, el('h3', {}, t('overview.layerN', { l })), el('span', { className: 'ov-times' }, t(L === 1 ? 'overview.layerTimesOne' : 'overview.layerTimes', { n: L, last: L - 1 })), el('p', { className: 'ov-layer-note' }, t(L === 1 ? 'overview.layersNoteOne' : 'overview.layersNote', { n: L, l })), pick),
      sublayer(block('input_norm', at({ view: 'stepper', step: 'input_norm' }), 'RMSNorm', 'input_layernorm', 'ov-norm'), attention(c, l, T)),
      residual('attn_residual', 'attn_residual', 'x + attn.out'),
      arrow([T, H]),
      sublayer(block('post_norm', at({ view: 'stepper', step: 'post_norm' }), 'RMSNorm', 'post_attention_layernorm', 'ov-norm'), ffn(c, l, T)),
      residual('layer_out', 'layer_out', 'x + ffn.out'),
    );
  }

  function draw(numbers = null) {
    const c = config();
    const T = numbers ? numbers.pieces.length : 'T';
    const { hidden_size: H, vocab_size: V } = c;
    const name = modelName(app.source ?? { kind: app.preview.model.kind, name: app.preview.model.url });
    const focused = diagram.contains(document.activeElement) ? (document.activeElement.dataset.key ?? document.activeElement.dataset.block) : null;
    diagram.replaceChildren(
      el('header', { className: 'ov-head' }, el('h2', {}, t('overview.title', { name }))),
      el('p', { className: 'explain ov-lead' }, t('overview.lead')),
      // The first screen: the sentence's path from its tokens to the prediction, and the text the
      // model goes on to write.
      el(
        'div',
        { className: 'ov-flow ov-path' },
        tokens(T, numbers),
        arrow([T], 'input_ids'),
        block('embed', link({ view: 'stepper', step: 'embed' }), t('overview.embed'), t('overview.embedSub', { v: V, h: H })),
        arrow([T, H]),
        stack(c, T),
        arrow([T, H]),
        block('final_norm', link({ view: 'stepper', step: 'final_norm' }), t('overview.finalNorm'), 'norm', 'ov-norm'),
        arrow([T, H]),
        block('logits', link({ view: 'stepper', step: 'logits' }), t('overview.logits'), t(c.tie_word_embeddings ? 'overview.logitsTied' : 'overview.logitsSub', { v: V })),
        arrow([T, V], t('overview.lastRow')),
        prediction,
        writer.node,
        next,
      ),
      // Under the first screen: one layer, step by step.
      el('div', { className: 'ov-flow ov-inside' }, layer(c, T)),
      start,
      // The model's sizes and its terms come after the picture they describe.
      el(
        'section',
        { className: 'ov-about', attrs: { 'aria-labelledby': 'ov-about-heading' } },
        el('h3', { id: 'ov-about-heading' }, t('overview.aboutTitle')),
        // The built-in model is not the tutorials' MiniMind: say how it differs before its numbers do.
        (app.source ?? app.preview.model).kind === 'builtin' && el('p', { className: 'explain ov-builtin-note' }, t('overview.builtinNote', { layers: c.num_hidden_layers, width: c.hidden_size, heads: c.num_attention_heads, d: c.head_dim, mmLayers: MINIMIND3.num_hidden_layers, mmHidden: MINIMIND3.hidden_size, mmD: MINIMIND3.hidden_size / MINIMIND3.num_attention_heads })),
        // The tutorials' heads × head_dim is the hidden size (8 × 96 = 768); where a model's is not, say so.
        c.num_attention_heads * c.head_dim !== c.hidden_size && el('p', { className: 'hint ov-heads-width' }, t('overview.headsWidth', { heads: c.num_attention_heads, d: c.head_dim, qw: c.num_attention_heads * c.head_dim, width: c.hidden_size })),
        facts(c),
      ),
    );
    if (focused) diagram.querySelector(`[data-key="${focused}"], [data-block="${focused}"]`)?.focus();
  }

  async function predict() {
    const found = await overviewNumbers(app);
    return found && { ...found, mask: state.mask };
  }

  // What the reader can do with the prediction: write it into the text and predict again, see how
  // MiniMind samples, or, after a finished sentence (its ending: a line break, a space, the end of a
  // message), try an unfinished one.
  function nextSteps(T, top, pieces, text) {
    const [best] = top;
    const ending = /^\s*$/.test(text ?? 'x') || best.piece === '<|im_end|>';
    const samples = UNFINISHED[state.lang] ?? UNFINISHED.en;
    return el(
      'div',
      { className: 'ov-next' },
      // ↵, ␣ or <|im_end|> shown in the box must not be left for the reader to guess.
      ...candidateNotes(top, 'p', 'hint ov-note', pieces[T - 1]),
      el(
        'div',
        { className: 'toolbar' },
        text !== null && !ending && el('button', { type: 'button', className: 'action', id: 'ov-append', on: { click: () => app.navigate({ text: state.text + text }) } }, t('overview.append', { token: tokenText(best.piece) })),
        el('a', { className: 'action secondary', href: link({ view: 'output', query: T - 1 }), dataset: { route: 'sampling' } }, t('overview.sampling')),
      ),
      ending &&
        el(
          'p',
          { className: 'hint ov-finished' },
          t('overview.finished'),
          t('overview.tryLead'),
          // “A…” or “B…”: each a button inside its quotes, the list said as a sentence.
          samples.flatMap((sample, n) => [
            n === 0 ? '' : n === samples.length - 1 ? t('overview.tryOr') : t('overview.listSep'),
            // The quotes kept with the words they open and close: a “ alone at a line's end reads as a typo.
            el('span', { className: 'ov-try-quoted' }, '“', el('button', { type: 'button', className: 'link ov-try', dataset: { text: sample }, on: { click: () => app.navigate({ text: sample }) } }, `${sample}…`), '”'),
          ]),
          t('overview.tryEnd'),
        ),
    );
  }

  // The prediction box: the top token, its probability and bar on one line, the next candidates under
  // it. What the marks in it mean (↵, ␣, <|im_end|>) is said under the box, with what to do next.
  function predictionBlock(T, top, pieces, ahead = false) {
    const [best, ...rest] = top;
    const bar = el('span', { className: 'ov-bar-fill' });
    bar.style.width = percent(best.p).replace(' ', '');
    return el(
      'a',
      { className: 'ov-block ov-predict', href: link({ view: 'output', query: T - 1 }), dataset: { block: 'prediction', numbers: ahead ? 'ahead' : 'run' } },
      el('span', { className: 'ov-predict-head' }, el('span', { className: 'ov-title' }, t('overview.prediction')), el('span', { className: 'ov-sub' }, t('overview.after', { token: quoted(tokenText(pieces[T - 1])) }))),
      el('span', { className: 'ov-top', dataset: { id: best.id, p: best.p } }, el('span', { className: 'ov-top-token' }, tokenText(best.piece)), el('span', { className: 'ov-top-p' }, percent(best.p)), el('span', { className: 'ov-bar', attrs: { 'aria-hidden': 'true' } }, bar)),
      el('span', { className: 'ov-rest' }, rest.length > 0 ? t('overview.then', { list: rest.map((r) => t('overview.candidate', { token: tokenText(r.piece), p: percent(r.p) })).join(t('overview.listSep')) }) : ' '),
    );
  }

  // While the weights arrive: the prediction box and what follows it as they will be, with nothing
  // in them yet, so the first screen keeps its place when the numbers come.
  function waiting() {
    return {
      box: el(
        'div',
        { className: 'ov-block ov-predict ov-waiting' },
        el('span', { className: 'ov-predict-head' }, el('span', { className: 'ov-title' }, t('overview.prediction')), el('span', { className: 'ov-sub' }, t('overview.predictionWaiting'))),
        el('span', { className: 'ov-top', attrs: { 'aria-hidden': 'true' } }, el('span', { className: 'ov-top-token' }, '…'), el('span', { className: 'ov-top-p' }, ''), el('span', { className: 'ov-bar' })),
        el('span', { className: 'ov-rest', attrs: { 'aria-hidden': 'true' } }, ' '),
      ),
      steps: el('div', { className: 'ov-next' }, el('div', { className: 'toolbar' }, el('a', { className: 'action secondary', href: link({ view: 'output' }), dataset: { route: 'sampling' } }, t('overview.sampling')))),
    };
  }

  // The route's attention map opens on the clearest head of this run ({l, h, role, score}, or null),
  // not on layer 0, head 0, where most heads rest on the first token and show a newcomer one bright column.
  function routeHead(best) {
    const attention = start.querySelector('a[data-route="attention"]');
    attention.href = link(best ? { view: 'attention', layer: best.l, head: best.h } : { view: 'attention' });
    attention.querySelector('.ov-route-head, .ov-route-pending')?.remove();
    // Random weights learned nothing: their "clearest" head is chance, and said as that.
    const headKey = app.source?.kind === 'random' ? 'overview.route.attentionHeadRandom' : 'overview.route.attentionHead';
    // The head's mean weight said in words, as a share of each token's attention, and where it goes.
    const where = t(`overview.route.where.${['previous', 'current', 'fixed'].includes(best?.role) ? best.role : 'other'}`);
    if (best) attention.append(el('span', { className: 'ov-route-text ov-route-head', dataset: { score: String(best.score) } }, t(headKey, { l: best.l, h: best.h, role: t(`role.${best.role}`), score: fixed(best.score, 2), pct: `${Math.round(100 * best.score)}%`, where })));
  }

  // The numbers drawn: the run's (predict) or, while the built-in model still loads for its opening
  // sentence, those computed ahead (page/ahead.js); the diagram, its prediction and the route's head
  // change in one go, so nothing is drawn in between that the numbers would then push down.
  function show(numbers) {
    const T = numbers.pieces.length;
    draw(numbers);
    prediction.replaceChildren(predictionBlock(T, numbers.top, numbers.pieces, numbers.ahead));
    next.replaceChildren(nextSteps(T, numbers.top, numbers.pieces, numbers.next));
    routeHead(numbers.head);
  }

  async function update() {
    const signal = updates.start();
    // Random weights learned nothing: the head grid's card does not promise learned patterns then.
    start.querySelector('a[data-route="grid"] .ov-route-text').textContent = t(app.source?.kind === 'random' ? 'overview.route.gridRandom' : 'overview.route.grid');
    if (!live() || state.tokens.ids.length === 0) {
      const ready = aheadNumbers(app);
      if (ready) {
        show(ready);
        writer.update(false);
        return;
      }
      const { box, steps } = waiting();
      draw();
      prediction.replaceChildren(box);
      next.replaceChildren(steps);
      writer.update(false);
      // The numbers computed ahead, should they arrive after the config: drawn then.
      aheadArrived(app).then((found) => found && !signal.aborted && update());
      return;
    }
    const found = await predict();
    if (signal.aborted || found === null) return;
    show(found);
    writer.update(true);
  }

  return {
    update,
    destroy() {
      updates.abort();
      writer.destroy();
    },
  };
}

// Where to go next on a first visit, one sentence each. The attention map's card holds the place of
// the line that names the head it opens on, written once this run's heads are measured.
function route() {
  const pending = () => el('span', { className: 'ov-route-text ov-route-pending', attrs: { 'aria-hidden': 'true' } }, t('overview.route.attentionHead', { l: 0, h: 0, role: t('role.previous'), score: '0.00', pct: '00%', where: t('overview.route.where.previous') }));
  return el(
    'nav',
    { className: 'ov-route', attrs: { 'aria-labelledby': 'ov-route-heading' } },
    el('h3', { id: 'ov-route-heading' }, t('overview.routeTitle')),
    el(
      'ol',
      {},
      ROUTE.map((view, i) => el('li', {}, el('a', { href: link({ view }), dataset: { route: view } }, el('span', { className: 'ov-route-name' }, `${i + 1}. ${t(`view.${view}`)}`), el('span', { className: 'ov-route-text' }, t(`overview.route.${view}`)), view === 'attention' && pending()))),
    ),
  );
}
