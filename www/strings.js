// Every sentence the page shows, through t(key, {name: value}). The tables are one module per
// language in strings/: en.js, part of every page, and zh.js (简体中文), fetched by loadLanguage only
// when the page is shown in Chinese, and before anything is drawn in it (page/start.js and
// page/open_state.js wait for it at start and on a change of language). Keys are grouped by where they appear; {name} placeholders are
// filled by t. tests/unit/strings.test.mjs holds both tables to the same keys and placeholders.

import EN from './strings/en.js';
import ZH_VIEWS from './strings/zh_views.js';

// The tables this page has, by language: English from the start, the others once fetched.
const TABLES = { en: EN };
// The tables fetched when first asked for, by their module's address, and the fetches under way.
const FILES = { zh: new URL('./strings/zh.js', import.meta.url).href };
const fetching = new Map();
let current = 'en';

/**
 * The tables, for the tests that every English string has its Chinese twin and for the readers of
 * links. STRINGS.zh holds only the Chinese tab labels (strings/zh_views.js) until the Chinese table
 * has been loaded (loadLanguage('zh')): the labels a link may name its view by on any page.
 */
export const STRINGS = { en: EN, zh: ZH_VIEWS };

/** The files of the tables fetched when asked for, which the offline copy keeps too (offline.js). */
export const LANGUAGE_FILES = Object.values(FILES);

/** Whether `lang`'s table is here, so that setLanguage(lang) shows it. */
export function hasLanguage(lang) {
  return Object.hasOwn(TABLES, lang);
}

/**
 * Fetches `lang`'s table the first time it is asked for. Resolves once it is here (at once for
 * English, or a language the page does not have, which is shown in English); rejects with an Error
 * that says which file could not be loaded and why, and a later call tries again.
 */
export function loadLanguage(lang) {
  if (hasLanguage(lang) || !Object.hasOwn(FILES, lang)) return Promise.resolve();
  if (!fetching.has(lang)) {
    const fetched = import(FILES[lang]).then(
      ({ default: table }) => {
        TABLES[lang] = table;
        STRINGS[lang] = table;
        fetching.delete(lang);
      },
      (err) => {
        fetching.delete(lang);
        throw new Error(`The ${lang} strings could not be loaded: ${err?.message ?? err}`, { cause: err });
      },
    );
    fetching.set(lang, fetched);
  }
  return fetching.get(lang);
}

/**
 * Shows the page in `lang` ('en' or 'zh'); anything else, and a language whose table is not loaded
 * (loadLanguage), is English. Sets <html lang> so fonts and screen readers follow. Returns the
 * language shown.
 */
export function setLanguage(lang) {
  current = hasLanguage(lang) ? lang : 'en';
  document.documentElement.lang = current === 'zh' ? 'zh-CN' : 'en';
  return current;
}

export function language() {
  return current;
}

// A string missing from the current table falls back to English, then to its key.
export function t(key, params = {}) {
  const text = TABLES[current][key] ?? EN[key] ?? key;
  const said = text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
  // English counts agree with their noun: a count of one filled into "{n} tokens" reads "1 token".
  return current === 'en' ? said.replace(SINGULAR, '$1$2') : said;
}

// "1 tokens" → "1 token", "1 prompt tokens" → "1 prompt token" (not "0.1 tokens", "21 tokens" or
// "1,001 tokens"), for the nouns counts go with.
const SINGULAR = /((?<![\d.,])1 (?:[A-Za-z]+ )?)(token|head|layer|row|call|step|character|neuron|expert|position|key|entry|tensor|file)s\b/g;
