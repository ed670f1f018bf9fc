// The page theme's colours for painting on a canvas (heatmap text, rules and cell gaps), resolved
// from style.css's variables (light-dark() included), so dark mode needs no second table: a hidden
// probe element takes each colour in turn. Each read restyles the page, so they are kept for as
// long as the theme (the button's pick, else the system's) holds.

import { el } from './dom.js';

let probe = null;
let themed = { key: null, colours: null };
const systemDark = matchMedia('(prefers-color-scheme: dark)');

/** Is the page dark now: the reader's pick, else the system's. */
export function isDark() {
  const pick = document.documentElement.dataset.theme;
  return pick ? pick === 'dark' : systemDark.matches;
}

/** {gap (packed pixel), gapCss, text, faint, rule, strong, band}: CSS colours, gap also as a pixel. */
export function themeColours() {
  const key = `${document.documentElement.dataset.theme ?? ''}|${systemDark.matches}`;
  if (themed.key === key) return themed.colours;
  if (!probe) {
    probe = el('span', { hidden: true });
    document.body.append(probe);
  }
  const v = (name) => {
    probe.style.color = `var(${name})`;
    return getComputedStyle(probe).color;
  };
  const surface = v('--surface');
  themed = { key, colours: { gap: packed(surface), gapCss: surface, text: v('--ink-2'), faint: v('--ink-3'), rule: v('--line-2'), strong: v('--ink'), band: v('--line') } };
  return themed.colours;
}

// 'rgb(r, g, b)' as a little-endian ABGR pixel, as a Uint32 view of ImageData holds it.
function packed(css) {
  const [r, g, b] = css.match(/\d+(\.\d+)?/g).map(Number);
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
}
