// Lesson: MiniMind-3's shapes and GQA (shared/seeds/002, sections 2–5). A six-token sentence through
// one layer with MiniMind-3's attention shape (hidden 768, 8 query heads, 4 KV heads, d = 96, random
// weights; the other seven layers have the same shapes), so the debug prints come out as the seed
// shows them: xq [1, 6, 8, 96], xk and xv [1, 6, 4, 96]. repeat_kv pairs the query heads with KV
// heads (Q0, Q1 → KV0 …), and the KV cache of MHA, GQA and MQA is priced by the core. An English
// reader's sentence is English, six tokens in MiniMind's tokenizer too (words.js).

import { el } from '../parts/dom.js';
import { heatmap, causalFuture } from '../parts/heatmap.js';
import { legend } from '../parts/legend.js';
import { sequential } from '../parts/color_scale.js';
import { axisLabel, bytes, shapeLabel, tokenText, spaced } from '../parts/format.js';
import { MINIMIND3, kindOf, kvChoices } from '../views/gqa.js';
import { range } from '../parts/controls.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';
import { lessonWords } from './words.js';

// Six tokens in MiniMind's tokenizer, like the seed's debugging session.
export const SENTENCE = '小明把苹果给了她';
export const SENTENCE_EN = 'John gave it to her';
export const WORDS = lessonWords([[SENTENCE, SENTENCE_EN]]);
export const DOOR = { view: 'gqa', text: SENTENCE, words: ['小明', '把', '苹果', '给了', '她'], note: doorNote, en: { text: SENTENCE_EN, words: ['John', 'gave', 'it', 'to', 'her'] } };

// The door's shapes count BOS too (7 tokens where the tutorial printed 6), on the built-in model's
// own head count and width: said with that model's numbers while it is the one loaded.
function doorNote(app, pieces) {
  const m = app.source?.kind === 'builtin' ? app.model : null;
  return m ? t('lesson.shapes.door', { n: pieces.length, heads: m.num_attention_heads, d: m.head_dim }) : t('lesson.shapes.doorOther', { n: pieces.length });
}
const ONE_LAYER = { ...MINIMIND3, num_hidden_layers: 1 };
const SEED = 3;
const CONTEXT = 2048;
const NAMES = ['q', 'k', 'v', 'probs'].map((n) => `layers.0.attn.${n}`);

export function mount(root, app) {
  const shapes = el('div', {});
  const sharing = el('div', { className: 'kv-groups' });
  const sharingKey = el('div', {});
  const costs = el('div', {});
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.shapes.shapesHeading')), shapes),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.shapes.sharingHeading')), el('p', { className: 'hint' }, t('lesson.shapes.sharingNote')), sharing, sharingKey),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.shapes.costHeading')), costs),
  );
  let maps = [];
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const { ids, pieces } = await app.call('tokenize', { text: WORDS.of(SENTENCE) });
    const args = { ids, attention_mask: null, prefix_len: 0, causal: true, layers: null };
    const [run, described] = await Promise.all([
      app.call('variantTensors', { config: ONE_LAYER, seed: SEED, args, names: NAMES }),
      Promise.all(kvChoices(MINIMIND3.num_attention_heads).map((n) => app.call('describe', { config: { ...MINIMIND3, num_key_value_heads: n } }))),
    ]);
    if (signal.aborted) return;
    maps.forEach((m) => m.destroy());
    maps = [];
    const c = run.config;
    const [q, k, v, probs] = run.tensors;
    const d = c.head_dim;
    shapes.replaceChildren(
      el('p', {}, spaced(t('lesson.shapes.sentence')), el('span', { className: 'chips' }, pieces.map((p, i) => el('span', { className: 'chip static' }, el('span', { className: 'chip-piece' }, tokenText(p)), el('span', { className: 'chip-id' }, ids[i]))))),
      el(
        'table',
        { className: 'data-table shapes' },
        el('thead', {}, el('tr', {}, [t('lesson.shapes.name'), t('lesson.shapes.shape'), t('lesson.shapes.meaning')].map((h) => el('th', { attrs: { scope: 'col' } }, h)))),
        el(
          'tbody',
          {},
          [
            ['xq', q, c.num_attention_heads],
            ['xk', k, c.num_key_value_heads],
            ['xv', v, c.num_key_value_heads],
          ].map(([name, tensor, heads]) =>
            el('tr', { dataset: { tensor: name } }, el('th', { attrs: { scope: 'row' } }, name), el('td', { className: 'shape' }, shapeLabel(tensor.shape)), el('td', {}, t('lesson.shapes.dims', { t: tensor.shape[0], heads, d }))),
          ),
        ),
      ),
      el(
        'ul',
        { className: 'proj-list' },
        el('li', { dataset: { proj: 'q' } }, el('code', {}, 'q_proj'), `: ${c.hidden_size} → ${c.num_attention_heads * d}`, el('span', { className: 'hint' }, ` (${c.num_attention_heads} × ${d})`)),
        el('li', { dataset: { proj: 'kv' } }, el('code', {}, 'k_proj / v_proj'), `: ${c.hidden_size} → ${c.num_key_value_heads * d}`, el('span', { className: 'hint' }, ` (${c.num_key_value_heads} × ${d})`)),
      ),
    );

    const rep = c.n_rep;
    const [, T, S] = probs.shape;
    const scale = sequential(0, 1);
    // The first map carries the tokens down its side and their positions along the top (hover does
    // not reach a phone; a word over a 10-pixel column broke into single characters); the others
    // read alike, their grids level with its one (style.css: .kv-group-heads).
    const axes = { rows: pieces.slice(0, T).map((p) => axisLabel(p, 4)), cols: range(S).map(String) };
    sharing.replaceChildren(
      ...range(c.num_key_value_heads).map((g) =>
        el(
          'div',
          { className: 'kv-group', dataset: { kv: g } },
          el('div', { className: 'kv-group-title' }, `${range(rep).map((r) => `Q${g * rep + r}`).join(t('gqa.headsSep'))} → KV${g}`),
          el(
            'div',
            { className: 'kv-group-heads' },
            range(rep).map((r) => {
              const h = g * rep + r;
              const map = heatmap();
              maps.push(map);
              // A causal run's weights: the future keys are hatched, as in every other map.
              const data = causalFuture(probs.data.subarray(h * T * S, (h + 1) * T * S), T, S);
              map.update({ cells: { data, rows: T, cols: S, square: true, maxCell: 16, future: true }, scale, legend: false, ...(h === 0 ? { labels: axes } : {}), interaction: { name: `Q${h}`, describe: (i, j) => [['probs', `[${h}, ${i}, ${j}]`], [t('tip.token'), `${tokenText(pieces[i])} → ${tokenText(pieces[j])}`]] } });
              return el('figure', { className: h === 0 ? 'q-head labelled' : 'q-head' }, el('figcaption', {}, `Q${h}`), map.node);
            }),
          ),
        ),
      ),
    );
    // How to read the small maps: their rows and columns by token, and what differs between two Q
    // heads of one box (their Q; the K and V are the same), since random weights draw no pattern worth reading.
    sharingKey.replaceChildren(el('p', { className: 'hint', dataset: { note: 'read' } }, t('lesson.shapes.readMaps', { tokens: pieces.map((p, i) => `${i} ${tokenText(p)}`).join(' · ') })), legend(scale, { future: true }));

    costs.replaceChildren(
      el(
        'table',
        { className: 'data-table' },
        el('thead', {}, el('tr', {}, [t('gqa.kind'), t('lesson.shapes.qHeads'), t('lesson.shapes.kvHeads'), t('gqa.perToken'), t('gqa.atContext', { n: CONTEXT })].map((h) => el('th', { attrs: { scope: 'col' } }, h)))),
        el(
          'tbody',
          {},
          described.map((x) =>
            el(
              'tr',
              { dataset: { kind: kindOf(x.num_attention_heads, x.num_key_value_heads) } },
              el('th', { attrs: { scope: 'row' } }, kindOf(x.num_attention_heads, x.num_key_value_heads)),
              el('td', {}, x.num_attention_heads),
              el('td', {}, x.num_key_value_heads),
              el('td', { dataset: { bytes: x.kv_cache_bytes_per_token } }, bytes(x.kv_cache_bytes_per_token)),
              el('td', { dataset: { bytes: x.kv_cache_bytes_per_token * CONTEXT } }, bytes(x.kv_cache_bytes_per_token * CONTEXT)),
            ),
          ),
        ),
      ),
      el('p', { className: 'hint' }, t('lesson.shapes.costNote')),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      maps.forEach((m) => m.destroy());
    },
  };
}
