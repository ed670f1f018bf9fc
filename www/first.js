// The page's very first script: a classic one, run while index.html is parsed, before the first paint,
// with no imports. index.html carries the overview's title and lead in English (data-first-look), so
// that a plain visit's largest text is painted at once, not after app.js's modules and the model.
// They are shown only where the page is about to draw that same overview in English: a visit without
// a link, or a plain link ("#lang=en&view=overview") that opens the overview and is not an embed, in
// a browser whose first language the page has is English (state.js readerLanguage). A whole-state
// link (s<N>.…) is compressed and cannot be read here without waiting: nothing is shown early for it.
(function firstLook() {
  const hash = location.hash.replace(/^#/, '');
  const fields = new URLSearchParams(hash);
  const whole = /(^|&)s\d+\./.test(hash);
  const languages = Array.isArray(navigator.languages) ? navigator.languages : [navigator.language];
  const reader = languages.map((tag) => String(tag).toLowerCase().split('-')[0]).find((lang) => lang === 'en' || lang === 'zh') ?? 'en';
  const plain = !whole && (fields.get('view') ?? 'overview') === 'overview' && !fields.has('embed') && !fields.has('lesson');
  if (plain && (fields.get('lang') ?? reader) === 'en') document.documentElement.classList.add('first-look');
})();
