// The page's address always says what is on screen. After every change the URL fragment is
// rewritten to the state's link (history.replaceState, at most every 250 ms, so a dragged slider
// adds no history entries and stays under browsers' rate limits). A link that could not be opened
// as written is explained in words: which fields were changed, or why the defaults are shown.

import { MAX_TEXT, fragment } from './state.js';
import { STRINGS, language, t } from './strings.js';
import { el } from './parts/dom.js';
import { latest } from './page/latest.js';

const WRITE_EVERY_MS = 250;

/** The page's own address without its fragment. */
function page() {
  return location.href.split('#')[0];
}

/** The full link to a state (for the reader, never in embed mode). */
export async function linkTo(state) {
  return `${page()}#${await fragment(state)}`;
}

/** A plain link inside the page (`#view=lessons&lesson=qk`) that keeps the page's language, so a
 * tab opened from it (middle click, new window) opens in the language the reader chose. */
export function pageHref(fields) {
  const params = new URLSearchParams(fields);
  if (language() !== 'en') params.set('lang', language());
  return `#${params}`;
}

/**
 * A link inside the page to the state `fields` change: a real href (open in a new tab, copy), and a
 * click that navigates in place (`navigate`, the app's). `props` are the element's other properties.
 */
export function pageLink(navigate, fields, text, props = {}) {
  return el('a', { ...props, href: pageHref(fields), on: { click: (e) => { e.preventDefault(); navigate(fields); } } }, text);
}

/** The <iframe> snippet that embeds a state, {width, height} in CSS pixels. */
export async function embedCode(state, title, { width, height }, theme = null) {
  const src = `${page()}#${await fragment(state, { embed: true, theme })}`;
  const attr = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<iframe src="${attr(src)}" title="${attr(title)}" width="${width}" height="${height}" style="border:0;max-width:100%" loading="lazy"></iframe>`;
}

/** Rewrites the fragment to follow the state; embed keeps the embed flag (and an embed's fixed theme)
 * in it; wrote() after each write. */
export function linkWriter({ embed, theme = null, wrote = () => {} }) {
  let toWrite = null;
  let timer = 0;
  let last = 0;
  const flushes = latest();
  let writing = false; // a flush between its start and its replaceState
  async function flush() {
    timer = 0;
    last = Date.now();
    const signal = flushes.start();
    writing = true;
    try {
      const hash = `#${await fragment(toWrite, { embed, theme })}`;
      // A link carries MAX_TEXT characters of the text; the history entry keeps all of it, so Back
      // and Forward bring back what was typed (page/address.js fromHash), not the link's cut.
      const text = typeof toWrite.text === 'string' ? toWrite.text : null;
      if (!signal.aborted && (location.hash !== hash || history.state?.text !== text)) {
        history.replaceState({ ...history.state, text }, '', hash);
        wrote();
      }
    } finally {
      if (!signal.aborted) writing = false;
    }
  }
  return {
    write(state) {
      toWrite = state;
      if (!timer) timer = setTimeout(flush, Math.max(0, last + WRITE_EVERY_MS - Date.now()));
    },
    // A navigation (back, a tab, an edited address) wins over a write still pending.
    cancel() {
      flushes.abort();
      clearTimeout(timer);
      timer = 0;
      writing = false;
    },
    // Whether the address has yet to catch up with the state (page/address.js settled() waits for it).
    pending: () => Boolean(timer) || writing,
  };
}

// A link's field as the reader knows it: in Chinese its name with the link's key after it, 步骤（step）;
// in English the key itself, which is already a word; a key the page has no name for, as written.
function fieldName(field) {
  const [base, sub] = field.startsWith('config.') ? ['config', field.slice(7)] : [field, null];
  const key = `link.field.${base}`;
  if (language() !== 'zh' || !(key in STRINGS.zh)) return field;
  return `${t(key)}（${sub ?? field}）`;
}

const WHOLE = { damaged: 'link.damaged', future: 'link.future', 'too-long': 'link.tooLong' };

/** What to tell the reader about a link: {title, details}, or null when it opened as written.
 * The model a link names is loaded by the page, which says so itself if it cannot. */
// `view`: the view that opened, named when the link's own view was not one the page has.
export function explainLink(problems, { kept = false, view = null } = {}) {
  const whole = problems.find((p) => p.field === null);
  // A field given twice is said apart: nothing in it was wrong, the last one was used.
  const repeated = [...new Set(problems.filter((p) => p.reason === 'repeated').map((p) => p.field))].map(fieldName);
  const fields = [...new Set(problems.filter((p) => p.field !== null && p.reason !== 'repeated').map((p) => p.field))].map(fieldName);
  const details = [];
  const list = (names) => names.join(t('link.fieldsSep'));
  const twice = repeated.length ? t('link.repeated', { fields: list(repeated) }) : null;
  if (whole && fields.length) details.push(t('link.fields', { fields: list(fields) }));
  if (twice && (whole || fields.length)) details.push(twice);
  // What was done to a text field, said beside the list: cut to the most a link carries, or read
  // past a broken %-escape (bytes that are not UTF-8 then show as �).
  for (const field of ['text', 'compare']) {
    if (problems.some((p) => p.field === field && p.reason === 'clamped')) details.push(t('link.textCut', { field: fieldName(field), n: MAX_TEXT.toLocaleString('en-US') }));
  }
  for (const field of new Set(problems.filter((p) => p.reason === 'repaired').map((p) => p.field))) details.push(t('link.repairedField', { field: fieldName(field) }));
  // A view not recognised: the names that are, each id with its tab's label in the page's language.
  if (problems.some((p) => p.field === 'view' && p.reason !== 'repeated')) {
    const views = Object.keys(STRINGS.en).filter((key) => /^view\.[a-z]+$/.test(key)).map((key) => (language() === 'zh' ? `${t(key)}（${key.slice(5)}）` : `${key.slice(5)} (${t(key)})`));
    details.push(t('link.viewNames', { views: list(views) }));
  }
  // On a live page whose address changed without a whole state, a damaged part left its settings as
  // they were.
  if (whole?.reason === 'damaged' && kept) return { title: whole.kept ? t('link.damagedLiveKept', { fields: list(whole.kept.map(fieldName)) }) : t('link.damagedLive'), details };
  if (whole?.kept) return { title: t('link.damagedKept', { fields: list(whole.kept.map(fieldName)) }), details };
  if (whole) return { title: t(WHOLE[whole.reason], { version: whole.version }), details };
  // A view alone, not recognised: named, with the view that opened instead.
  const badView = problems.find((p) => p.field === 'view' && p.reason === 'invalid' && p.value !== undefined);
  if (badView && view && fields.length === 1 && !twice) return { title: t('link.viewUnknown', { view: badView.value, opened: t(`view.${view}`) }), details };
  if (fields.length) return { title: t('link.fields', { fields: list(fields) }), details };
  if (twice) return { title: twice, details };
  return null;
}
