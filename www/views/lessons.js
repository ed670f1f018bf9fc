// The lessons: presets that reproduce the seeds' worked examples (shared/seeds) with their own
// numbers, every matrix editable cell by cell, every result computed by the core. One lesson at a
// time, chosen by #view=lessons&lesson=…; each lesson is its own module in www/lessons/.
// Lessons bring their own numbers, so the sentence, model and share panels step aside while one is
// open (html.lessons-focus; style.css) and the lesson gets the page's width. A button brings the
// panels back (html.lessons-sidebar); that class stays while the page is open, so the reader's
// choice survives a change of lesson or language.
//
// The reader's edits are kept in the link (state.edits, keys "lesson.table"): the lesson shown gets
// an edit book of its own tables' cells (parts/matrix_table.js: openEdits), and whatever the book
// records is written back with app.set, so the address follows each edit. Cells of another lesson
// are dropped when a lesson opens; cells of a table the lesson does not have, or outside its shape,
// are refused with the link banner. A change of the link's edits from outside (back, forward,
// setState) opens the lesson afresh with them.
//
// Each lesson ends with a door to the same idea on the real model: its module's
// DOOR = { view, text, fields?, focus?, target?, key?, words?, note? (a string key, or { en, zh }), en? } opens `view` on the built-in model
// with the tutorial's sentence typed in (plain link fields `fields`; `focus`: the token whose row to select as the
// query; `target`: the earlier token it should look at, to pick the head where it does most; `key`:
// pick `target` as the key too; `note: { en, zh }`: what to look for there). An English reader gets
// `en` over it ({ text, words, model?, pieces?, layer?, head?, ... }: the sentence in English, on
// SmolLM2 where the idea needs a model that learned English, with the tokens that model makes and the
// head measured on it), unless the lesson's switch shows the tutorial's original words
// (lessons/words.js) or the site has no SmolLM2. The door shows the tokens the model's tokenizer
// makes of the sentence and says, from them, where they differ from the tutorial's words (`words`; without them, a sentence's words are those
// between its spaces, and one without spaces names none):
// spaces that become tokens, words that BPE builds from smaller pieces.

import { el } from '../parts/dom.js';
import { t, language } from '../strings.js';
import { pageLink } from '../link.js';
import { tokenText, spaced } from '../parts/format.js';
import { openEdits, closeEdits } from '../parts/matrix_table.js';
import { validate } from '../state.js';
import { addToBanner } from '../panels/banner.js';
import * as qkMatch from '../lessons/qk_match.js';
import * as whoSheMeans from '../lessons/who_she_means.js';
import * as flow from '../lessons/flow.js';
import * as sqrtD from '../lessons/sqrt_d.js';
import * as causalMask from '../lessons/causal_mask.js';
import * as paddingMask from '../lessons/padding_mask.js';
import * as shapes from '../lessons/shapes_gqa.js';
import * as multiHead from '../lessons/multi_head.js';
import { strongestHead } from '../parts/pair_head.js';
import { latest } from '../page/latest.js';
import { smollm2OnSite } from '../model_source.js';

// In the tutorials' order: one head's Q·K, √d and the masks (seeds/000), then many heads, and only
// then MiniMind-3's shapes, where GQA shares K and V between them (seeds/002).
export const LESSONS = { qk: qkMatch, who: whoSheMeans, flow, sqrt_d: sqrtD, causal: causalMask, padding: paddingMask, multihead: multiHead, shapes };

// Where each lesson comes from in the two tutorials (seeds/000: ① “MiniMind — 阶段 2.5”; seeds/002:
// ② the walk through MiniMind's Attention code): [tutorial, section] pairs, said above the lesson.
export const SOURCES = {
  qk: [[1, '2']],
  who: [[1, '2']],
  flow: [[1, '3']],
  sqrt_d: [[1, '3']],
  causal: [[1, '4'], [2, '6']],
  padding: [[2, '7']],
  multihead: [[1, '4'], [2, '3']],
  shapes: [[2, '2–5']],
};
const MARK = { 1: '①', 2: '②' };
const sourceOf = (id) => t('lessons.from', { list: SOURCES[id].map(([n, section]) => t(section.includes('–') ? 'lessons.sourceRange' : 'lessons.source', { n: MARK[n], section })).join(t('lessons.sourceJoin')) });

// The sentences the tutorials themselves write (tutorial ① §2 and §4), spaces between words taken out.
// and their English translations; a door on SmolLM2 says so.
const TUTORIAL_SENTENCES = [qkMatch.SENTENCE, causalMask.DOOR.text];
const TRANSLATED = [qkMatch.SENTENCE_EN, causalMask.DOOR.en.text];
function sentenceKind(text, door) {
  const padded = (list) => door.fields?.pad?.length && list.some((s) => text.endsWith(s));
  if (door.model === 'smollm2') return TRANSLATED.includes(text) ? 'noteSmollm2' : 'noteSmollm2Own';
  if (TUTORIAL_SENTENCES.includes(text)) return 'note';
  if (TRANSLATED.includes(text)) return 'noteTranslated';
  if (padded(TUTORIAL_SENTENCES)) return 'notePadded';
  if (padded(TRANSLATED)) return 'notePaddedTranslated';
  return 'noteOwn';
}

// Whether this site has SmolLM2 (model_source.js), asked once, when an English door first needs it.
let smollm2Here = null;

// The door a reader gets: the tutorial's, or an English reader's (`en` over it) unless the lesson shows
// the tutorial's original words. {door, missing}: missing where SmolLM2 would be needed and is not here.
async function doorOf({ DOOR, WORDS }) {
  if (!DOOR.en || language() !== 'en' || WORDS?.chinese) return { door: DOOR, missing: false };
  if (DOOR.en.model === 'smollm2' && (await (smollm2Here ??= smollm2OnSite())) === false) return { door: DOOR, missing: true };
  return { door: { ...DOOR, ...DOOR.en }, missing: false };
}

// The cells of lesson `id` in the link's edits, keyed by table; and back.
function cellsOf(edits, id) {
  return Object.fromEntries(Object.entries(edits ?? {}).flatMap(([key, cells]) => (key.startsWith(`${id}.`) ? [[key.slice(id.length + 1), cells]] : [])));
}

function editsOf(cells, id) {
  const edits = Object.fromEntries(Object.entries(cells).map(([table, list]) => [`${id}.${table}`, list]));
  return Object.keys(edits).length ? edits : null;
}

// The tutorial's words as the tokenizer cut them: [{word, pieces}] for each word made of several
// pieces (whitespace pieces aside), and the whitespace pieces' count. Null without words, or where
// the pieces do not line up with them (a piece across a word boundary).
export function readTokens(words, pieces) {
  const spaces = pieces.filter((p) => p.trim() === '').length;
  if (!words) return { spaces, split: null };
  // A piece's leading space (English BPE's " weather") belongs to no word.
  const rest = pieces.filter((p) => p.trim() !== '').map((p) => p.replace(/^\s+/, ''));
  const split = [];
  let at = 0;
  for (const word of words) {
    const taken = [];
    while (at < rest.length && taken.join('').length < word.length) taken.push(rest[at++]);
    if (taken.join('') !== word) return { spaces, split: null };
    if (taken.length > 1) split.push({ word, pieces: taken });
  }
  return { spaces, split };
}

// The lessons never read the reader's run: the page shows them when that sentence cannot run (page/screen.js).
export const runless = true;

export function mount(root, app) {
  const { state } = app;
  const page = document.documentElement;
  page.classList.add('lessons-focus');
  const toggle = el('button', { type: 'button', id: 'lessons-sidebar', className: 'action secondary', on: { click: () => { page.classList.toggle('lessons-sidebar'); labelToggle(); } } });
  function labelToggle() {
    const open = page.classList.contains('lessons-sidebar');
    toggle.textContent = t(open ? 'lessons.hideSidebar' : 'lessons.showSidebar');
    toggle.setAttribute('aria-expanded', String(open));
  }
  labelToggle();
  // The Share panel without the sidebar: a lesson is a figure a blog author embeds as it is. The
  // page's one Share panel (the sidebar's section, page/panels.js) is moved under the lessons' bar
  // while open here, and back to its place when closed, when the sidebar comes back or when the view
  // goes: one panel, so its fields keep their ids and follow the state as in the sidebar.
  const shareBox = el('div', { className: 'lesson-share', id: 'lesson-share', hidden: true });
  const shareToggle = el('button', { type: 'button', className: 'action secondary lesson-share-toggle', attrs: { 'aria-controls': 'lesson-share', 'aria-expanded': 'false' }, on: { click: () => showShare(shareBox.hidden) } });
  let shareHome = null; // {parent, next}: where the sidebar keeps the panel while it is here
  function showShare(open) {
    const section = shareHome ? shareBox.firstElementChild : document.querySelector('.sidebar [data-hideable="share"]');
    if (open && section && !shareHome) {
      shareHome = { parent: section.parentNode, next: section.nextSibling };
      page.classList.remove('lessons-sidebar');
      labelToggle();
      shareBox.append(section);
    } else if (!open && section && shareHome) {
      shareHome.parent.insertBefore(section, shareHome.next);
      shareHome = null;
    }
    shareBox.hidden = shareHome === null;
    shareToggle.textContent = t(shareBox.hidden ? 'lessons.share' : 'lessons.hideShare');
    shareToggle.setAttribute('aria-expanded', String(!shareBox.hidden));
  }
  showShare(false);
  toggle.addEventListener('click', () => page.classList.contains('lessons-sidebar') && showShare(false));
  const tabs = Object.keys(LESSONS).map((id) =>
    pageLink(app.navigate, { view: 'lessons', lesson: id }, [t(`lesson.${id}.title`), el('span', { className: 'lesson-tab-source', title: sourceOf(id) }, SOURCES[id].map(([n]) => MARK[n]).join(''))], { className: 'lesson-tab', dataset: { lesson: id } }),
  );
  // The two tutorials, named once above the lessons: every lesson says where in them it is.
  const sources = el('p', { className: 'hint lessons-sources' }, t('lessons.sources'));
  const article = el('article', { className: 'lesson' });
  root.append(el('div', { className: 'lessons-bar' }, el('nav', { className: 'lesson-tabs', attrs: { 'aria-label': t('lessons.label') } }, tabs), el('div', { className: 'toolbar' }, shareToggle, toggle)), shareBox, sources, article);
  let current = null; // {id, instance, book, written: the edits as last written, checked: refusals told, door}

  // Writes the lesson's cells to the link's edits (validated as a link's would be).
  function write(id, cells) {
    const edits = validate({ edits: editsOf(cells, id) }).state.edits;
    current.written = JSON.stringify(edits);
    app.set({ edits });
  }

  function open(id) {
    const moved = current !== null && current.id !== id;
    current?.instance.destroy();
    if (current) closeEdits(current.book);
    const body = el('div', { className: 'lesson-body' });
    const door = el('section', { className: 'card lesson-door', dataset: { view: LESSONS[id].DOOR.view } });
    // The way on: the next lesson, named, after the door (the last lesson leads to the overview).
    const ids = Object.keys(LESSONS);
    const next = ids[ids.indexOf(id) + 1];
    const onward = next
      ? pageLink(app.navigate, { view: 'lessons', lesson: next }, t('lessons.next', { title: t(`lesson.${next}.title`) }), { className: 'action secondary lesson-next', dataset: { lesson: next } })
      : pageLink(app.navigate, { view: 'overview' }, t('lessons.done'), { className: 'action secondary lesson-next' });
    const title = el('h2', { tabIndex: -1 }, t(`lesson.${id}.title`));
    // With the reader's numbers in place of the tutorial's, the intro's "the numbers match the
    // tutorial's output" no longer holds: said under it while any cell is edited (update).
    const edited = el('p', { className: 'hint lesson-edited', hidden: true }, t('lessons.edited'));
    article.replaceChildren(title, el('p', { className: 'hint lesson-source', dataset: { lesson: id } }, sourceOf(id)), el('p', { className: 'explain lesson-intro' }, t(`lesson.${id}.intro`)), edited, body, door, el('p', { className: 'lesson-onward' }, onward));
    const cells = cellsOf(state.edits, id);
    current = { id, book: null, written: JSON.stringify(editsOf(cells, id)), checked: false, door: { node: door, drawn: null }, edited };
    current.book = openEdits(cells, (next) => current?.id === id && write(id, next));
    current.instance = LESSONS[id].mount(body, app);
    if (current.written !== JSON.stringify(state.edits)) queueMicrotask(() => current?.id === id && write(id, cells)); // another lesson's cells go
    // Another lesson opened ("next lesson", a tab): it starts at its title, just under the sticky top
    // bar, not at the old lesson's scroll (which left the reader at the new one's end), and the
    // title takes the focus, so a screen reader starts there too.
    if (moved) {
      const above = title.getBoundingClientRect().top - (document.querySelector('.topbar')?.offsetHeight ?? 0) - 8;
      if (above < 0) scrollBy(0, above);
      title.focus({ preventScroll: true });
    }
  }

  // Cells of tables the lesson never drew, or outside a table's shape: told once, and dropped.
  function refuse() {
    const { book, id } = current;
    const unknown = Object.keys(book.cells).filter((table) => !book.claimed.has(table));
    const refused = [...unknown, ...book.refused.splice(0)];
    if (!refused.length) return;
    for (const table of unknown) delete book.cells[table];
    // One line per table, however many of its cells a link holds (thousands fit in one).
    const perTable = new Map();
    for (const r of refused) {
      const table = r.split(' [')[0];
      perTable.set(table, [...(perTable.get(table) ?? []), r]);
    }
    addToBanner(() => t('lessons.editsRefused'), () => [...perTable].map(([table, cells]) => (cells.length > 3 ? t('lessons.editsRefusedMany', { table: `${id}.${table}`, n: cells.length }) : cells.map((r) => `${id}.${r}`).join(', '))));
    write(id, book.cells);
  }

  async function drawDoor(id) {
    const { door: DOOR, missing } = await doorOf(LESSONS[id]);
    if (current?.id !== id) return;
    const { text } = DOOR;
    const model = DOOR.model ?? 'builtin';
    const { door } = current;
    // Tokenized as the page will tokenize it (BOS first or not), so `focus` names the same position there.
    // A door opens its view as the page starts: BOS first (unless it says otherwise), nothing padded.
    // A door on SmolLM2 brings the tokens SmolLM2 makes (it puts no BOS first) and its head, measured:
    // the model loaded here is the built-in one.
    const fields = { bos: true, pad: [], ...(DOOR.fields ?? {}) };
    const bos = !DOOR.pieces && fields.bos && app.model?.bos_token_id != null;
    const drawn = `${language()}|${bos}|${model}|${text}`;
    if (door.drawn === drawn) return;
    const { ids, pieces, special } = DOOR.pieces ? { ids: null, pieces: DOOR.pieces, special: DOOR.pieces.map(() => false) } : await app.tokenize(text, bos);
    if (current?.id !== id) return;
    const focus = DOOR.focus ? pieces.lastIndexOf(DOOR.focus) : -1;
    const target = DOOR.target && focus >= 0 ? pieces.lastIndexOf(DOOR.target, focus) : -1;
    const head = Number.isInteger(DOOR.layer) ? { layer: DOOR.layer, head: DOOR.head } : ids && target >= 0 ? await strongestHead(app, ids, focus, target) : null;
    if (current?.id !== id) return;
    door.drawn = drawn;
    const patch = { view: DOOR.view, model, text, ...fields, ...(focus >= 0 ? { query: focus } : {}), ...(DOOR.key && target >= 0 ? { key: target } : {}), ...(head ?? {}) };
    // What to look for, said with the door's own words and head where its note asks for them.
    const look = { query: DOOR.focus?.trim(), key: DOOR.target?.trim(), l: head?.layer, h: head?.head };
    const { spaces, split } = readTokens(DOOR.words ?? (/\s/.test(text) ? text.split(/\s+/).filter(Boolean) : null), pieces.filter((_, i) => !special[i]));
    const parts = [
      el('h3', {}, t(model === 'smollm2' ? 'lessons.door.headingSmollm2' : 'lessons.door.heading')),
      // Said as what it is: one of the tutorials' own sentences (①'s 小明把苹果给了小红，她很开心 and
      // 今天天气很好), one of them with padding before it, or a sentence written in their style.
      el('p', { dataset: { note: 'door' } }, t(`lessons.door.${sentenceKind(text, DOOR)}`, { view: t(`view.${DOOR.view}`), original: t('lessons.words.switch') })),
      missing && el('p', { className: 'hint', dataset: { note: 'no-smollm2' } }, t('lessons.door.noSmollm2')),
      el('p', { className: 'door-sentence' }, el('q', { lang: /[\u3400-\u9fff]/.test(text) ? 'zh-CN' : 'en' }, text)),
      DOOR.note && el('p', { dataset: { note: 'look' } }, typeof DOOR.note === 'function' ? DOOR.note(app, pieces) : typeof DOOR.note === 'string' ? t(DOOR.note, look) : (DOOR.note[language()] ?? DOOR.note.en)),
      el('p', { className: 'door-tokens' }, spaced(t(bos ? 'lessons.door.tokensBos' : 'lessons.door.tokens', { n: pieces.length })), el('span', { className: 'chips' }, pieces.map((p, i) => el('span', { className: special[i] ? 'chip static special' : 'chip static', dataset: { i } }, el('span', { className: 'chip-piece' }, tokenText(p)))))),
      spaces > 0 && el('p', { className: 'hint', dataset: { note: 'spaces' } }, t('lessons.door.spaces', { n: spaces, all: pieces.length })),
      split?.length > 0 && el('p', { className: 'hint', dataset: { note: 'split' } }, t('lessons.door.split', { words: split.map((s) => `${s.word} → ${s.pieces.join(' + ')}`).join(t('lessons.door.listSep')) })),
      pageLink(app.navigate, patch, t('lessons.door.open', { view: t(`view.${DOOR.view}`) }), { className: 'action door-link' }),
    ];
    door.node.replaceChildren(...parts.filter(Boolean));
  }

  const updates = latest();
  async function update() {
    const signal = updates.start();
    const id = state.lesson in LESSONS ? state.lesson : 'qk';
    for (const tab of tabs) {
      if (tab.dataset.lesson === id) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    if (current?.id !== id || current.written !== JSON.stringify(state.edits)) open(id);
    current.edited.hidden = Object.keys(cellsOf(state.edits, id)).length === 0;
    await Promise.all([current.instance.update(), drawDoor(id)]);
    // Only the latest update of a view still shown has surely drawn the lesson's tables (an earlier
    // one, or one whose view was taken down while the model ran, may have stopped before).
    if (!signal.aborted && !current.checked) {
      current.checked = true;
      refuse();
    }
  }

  return {
    update,
    destroy() {
      updates.abort();
      showShare(false);
      current?.instance.destroy();
      if (current) closeEdits(current.book);
      page.classList.remove('lessons-focus');
    },
  };
}
