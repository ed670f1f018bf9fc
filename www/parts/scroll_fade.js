// A strip that scrolls sideways (the pipeline's rail, the tabs on a phone) fades at an edge only
// where more lies beyond it: `data-fade` is "left", "right", "both" or absent, and style.css masks
// that edge. A label cut at an edge then reads as "there is more", not as a broken word.
// A figure that scrolls (`cue`: the head grid, the knock-out board, the logit lens) also says so in
// words, on a line just above it that an embed shows (share.css): an embedded page's scrollbar is
// often hidden until touched, and a fade alone reads as the figure's end.

import { el } from './dom.js';
import { t } from '../strings.js';

// `onChange(fade)` hears each mark (a caller that says in words that the strip scrolls).
export function scrollFade(node, onChange = () => {}, { cue = false } = {}) {
  const line = cue ? el('p', { className: 'scroll-cue', hidden: true, attrs: { 'aria-hidden': 'true' } }) : null;
  const mark = () => {
    const more = node.scrollWidth - node.clientWidth;
    const left = node.scrollLeft > 1;
    const right = more - node.scrollLeft > 1;
    const fade = left && right ? 'both' : left ? 'left' : right ? 'right' : '';
    if (fade) node.dataset.fade = fade;
    else delete node.dataset.fade;
    if (line) {
      if (!line.isConnected && node.parentNode) node.before(line);
      // Written only when it changes: a scroll that keeps the same edges leaves the page alone.
      if (line.dataset.edge !== fade) {
        line.hidden = !fade;
        line.dataset.edge = fade;
        line.textContent = fade ? t(`scroll.cue.${fade}`) : '';
      }
    }
    onChange(fade);
  };
  node.addEventListener('scroll', mark, { passive: true });
  const resize = new ResizeObserver(mark);
  resize.observe(node);
  return { mark, destroy: () => resize.disconnect() };
}
