// What each head does on the current input, as the core measures it on the run's softmax weights
// (src/analysis/head_roles.rs, the worker's headRoles): previous-token, current-token, first-token
// (the attention sink), broad or mixed, with the score behind the label and, where the pattern is
// clear, what to look for in the picture. The head grid and the attention map both show it; with
// the grid's induction probe on (parts/induction_probe.js), induction and duplicate-token too.

import { el } from './dom.js';
import { fixed, tokenText } from './format.js';
import { t } from '../strings.js';

export const ROLES = ['previous', 'current', 'first', 'fixed', 'broad', 'mixed', 'induction', 'duplicate'];

// One request per run: the roles of the model's current run, kept while its arguments stay the same
// (a new model is a new app.model object, so its runs never meet the old one's).
const kept = new WeakMap();

// Resolves to roles[layer][head]: {role, score, strong, scores: {previous, current, first, spread,
// rows}}, or null for a head of an input too short to tell (fewer than MIN_ROWS rows measured).
export function headRoles(app) {
  const args = app.args();
  const key = JSON.stringify(args);
  const found = kept.get(app.model);
  if (found?.key === key) return found.roles;
  const roles = app.call('headRoles', { args }).then(byLayer);
  const entry = { key, roles };
  kept.set(app.model, entry);
  roles.catch(() => kept.get(app.model) === entry && kept.delete(app.model));
  return roles;
}

// Fewer measured rows than this tell no habit: a 4-token prompt's two rows can make any head look
// "fixed" on one word. Such a head is "too short to tell", as one with no rows is.
export const MIN_ROWS = 4;

function byLayer(layers) {
  const out = [];
  for (const { layer, heads } of layers) {
    out[layer] = [];
    for (const h of heads) out[layer][h.head] = h.role && h.scores.rows >= MIN_ROWS ? h : null;
  }
  return out;
}

// The heads with the strongest clear role other than resting on the first token (previous token,
// itself, one fixed token; induction and duplicate-token from the probe), strongest first, at most
// `n`: [{l, h, r}]. These are the heads a newcomer should see first; layer 0, head 0 mostly rests.
const CLEAR = new Set(['previous', 'current', 'fixed', 'induction', 'duplicate']);
export function clearestHeads(roles, n) {
  return roles
    .flatMap((heads, l) => (heads ?? []).map((r, h) => ({ l, h, r })))
    .filter(({ r }) => r && CLEAR.has(r.role))
    .sort((a, b) => b.r.score - a.r.score)
    .slice(0, n);
}

// "previous-token 0.93", "previous-token (weak) 0.41" (a mean weight), "broad, spread 0.88" (a
// spread, named so, since it is not a weight); too short: says so. `compact` leaves "(weak)" out of
// the words (the badge marks it instead), so a grid thumbnail's label keeps to two lines.
// `text` cut to `width` columns (a CJK character takes two), with "…" where it is cut, so that a
// grid thumbnail's label keeps to two lines.
function cut(text, width) {
  const chars = [...text];
  const cols = (c) => (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60\u{20000}-\u{3fffd}]/u.test(c) ? 2 : 1);
  let used = 0;
  for (let i = 0; i < chars.length; i++) {
    used += cols(chars[i]);
    if (used > width) return `${chars.slice(0, Math.max(1, i - 1)).join('')}…`;
  }
  return text;
}

// With `pieces`, a fixed-token head's label names its token, cut to a few characters ("always “苹果”
// 0.52"), as the head pickers do.
export function roleText(r, compact = false, pieces = null) {
  if (!r?.role) return t('role.unmeasured');
  const token = r.role === 'fixed' && pieces?.[r.scores?.fixed_key] !== undefined ? tokenText(pieces[r.scores.fixed_key]) : null;
  const short = token === null ? null : cut(token, 6);
  const numbers = { role: short === null ? t(`role.${r.role}`) : t('role.fixedShort', { token: short }), score: fixed(r.score, 2) };
  if (r.role === 'broad' || r.role === 'mixed') return t('role.spreadLabel', numbers);
  return t(r.strong || compact ? 'role.label' : 'role.weak', numbers);
}

// A head picker's words for a role, where there is room to say what the number is: "previous-token,
// mean weight 0.74", "one fixed token “,”, mean weight 0.35" (the token it keeps to, from `pieces`),
// "mixed, spread 0.68".
export function roleOption(r, pieces) {
  if (!r?.role || r.role === 'broad' || r.role === 'mixed') return roleText(r);
  const token = r.role === 'fixed' && pieces?.[r.scores?.fixed_key] !== undefined ? tokenText(pieces[r.scores.fixed_key]) : null;
  const role = token === null ? t(`role.${r.role}`) : t('role.fixedOn', { token });
  return t(r.strong ? 'role.option' : 'role.optionWeak', { role, score: fixed(r.score, 2) });
}

// The token a fixed-token head keeps to (its position in the input, as the core found it).
const keyToken = (r, pieces) => ({ key: r.scores.fixed_key, token: tokenText(pieces[r.scores.fixed_key] ?? '') });

// Every measure behind the label, for a tooltip or a note: the probe's scores first when it ran.
// pieces: the input's token pieces, to name the token a head keeps most weight on.
export function roleDetail(r, pieces) {
  if (r?.probe) {
    const { induction, duplicate, rows } = r.probe;
    return `${t('role.probeDetail', { induction: fixed(induction, 2), duplicate: fixed(duplicate, 2), rows })} ${roleDetail(r.live, pieces)}`;
  }
  if (!r) return t('role.unmeasuredWhy', { min: MIN_ROWS });
  const s = r.scores;
  return t('role.detail', { previous: fixed(s.previous, 2), current: fixed(s.current, 2), first: fixed(s.first, 2), spread: fixed(s.spread, 2), fixed: fixed(s.fixed, 2), ...keyToken(r, pieces), rows: s.rows });
}

// Where a long text's head changes what it does (the core's stretches, src/analysis/head_roles.rs):
// "Along this long text it changes: positions 0–191 previous-token 0.58; positions 192–1152 mixed", and, for
// a model trained on shorter windows than the text (`trained` tokens), that the later positions are
// new to it. [] where the head keeps one role (or the input is short).
export function roleStretches(r, pieces, trained = null) {
  const parts = r?.stretches;
  if (!parts?.length) return [];
  const items = parts.map((s) => el('span', { className: 'role-stretch', dataset: { from: s.from, to: s.to - 1, role: s.role } }, t('role.stretchAt', { from: s.from, to: s.to - 1 }), ' ', roleBadge(s, pieces)));
  const past = trained !== null && parts.at(-1).to > trained;
  return [
    el(
      'p',
      { className: 'head-role-stretches' },
      el('strong', {}, t('role.stretches')),
      ' ',
      items.flatMap((item, k) => (k ? [t('role.stretchSep'), item] : [item])),
      ...(past ? [' ', el('span', { className: 'role-trained' }, t('role.trainedWindow', { n: trained, last: trained - 1 }))] : []),
    ),
  ];
}

// A small label coloured by role (style.css: .role-<name>).
export function roleBadge(r, pieces, { compact = false } = {}) {
  const weak = compact && r?.role && r.role !== 'broad' && r.role !== 'mixed' && !r.strong;
  // Where there is room (the attention map's line), the number is named: "previous-token, mean weight 0.75".
  return el('span', { className: `role-badge role-${r?.role ?? 'none'}${weak ? ' weak' : ''}`, title: roleDetail(r, pieces) }, compact ? roleText(r, compact, pieces) : roleOption(r, pieces));
}

// A sentence on what the heatmap shows for this role, or null where no single pattern exists. A
// fixed column at position 1 or 2 may be a resting place (as the first token is), and is said so; one
// further on is not, and the reader is only asked to move the word to tell word from place.
export function lookFor(r, pieces) {
  if (!r || r.role === 'mixed') return null;
  if (r.role !== 'fixed') return t(`role.look.${r.role}`);
  const at = keyToken(r, pieces);
  return t(at.key > 2 ? 'role.look.fixedLater' : 'role.look.fixed', at);
}

// What each role's colour means, and the ⊘ under every thumbnail, said once above the head grid
// and the knock-out board (a newcomer does not hover every label to find out). The probe's two roles join it while the probe is on.
const LEGEND_ROLES = ['previous', 'current', 'first', 'fixed', 'broad', 'mixed'];
export const PROBE_ROLES = ['induction', 'duplicate'];
export function roleLegend(probing, { weak = false } = {}) {
  return el(
    'ul',
    { className: 'role-legend', attrs: { 'aria-label': t('grid.legend') } },
    // A fixed-token head's label under a thumbnail is the arrow and its token (→ “I” 0.35): the key
    // shows that form.
    // What each role means is a sentence of its own (.role-meaning): a figure without its explanations
    // (an embed's "prose" flag, an export; share.css) keeps the coloured names alone.
    [...LEGEND_ROLES, ...(probing ? PROBE_ROLES : [])].map((role) => el('li', { dataset: { role } }, el('span', { className: `role-badge role-${role}` }, t(role === 'fixed' ? 'role.legendFixed' : `role.${role}`)), el('span', { className: 'role-meaning' }, ` ${t(`role.means.${role}`)}`))),
    // A dashed mark is a weak role (mean weight 0.3 to 0.5), said where the labels are compact; a
    // figure says it in two words.
    weak && el('li', { className: 'role-legend-weak' }, el('span', { className: 'role-badge role-previous weak' }, t('role.previous')), el('span', { className: 'role-meaning' }, ` ${t('role.weakMark')}`), el('span', { className: 'role-meaning-short' }, t('role.weakShort'))),
    // The ⊘ buttons' key: a figure without them (an export, an embed without its view's controls) has none.
    el('li', { className: 'role-legend-knock-item' }, el('span', { className: 'role-legend-knock', attrs: { 'aria-hidden': 'true' } }, '⊘'), ' ', t('grid.legendKnock')),
  );
}
