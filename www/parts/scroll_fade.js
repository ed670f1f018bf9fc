// A strip that scrolls sideways (the pipeline's rail, the tabs on a phone) fades at an edge only
// where more lies beyond it: `data-fade` is "left", "right", "both" or absent, and style.css masks
// that edge. A label cut at an edge then reads as "there is more", not as a broken word.

// `onChange(fade)` hears each mark (a caller that says in words that the strip scrolls).
export function scrollFade(node, onChange = () => {}) {
  const mark = () => {
    const more = node.scrollWidth - node.clientWidth;
    const left = node.scrollLeft > 1;
    const right = more - node.scrollLeft > 1;
    const fade = left && right ? 'both' : left ? 'left' : right ? 'right' : '';
    if (fade) node.dataset.fade = fade;
    else delete node.dataset.fade;
    onChange(fade);
  };
  node.addEventListener('scroll', mark, { passive: true });
  const resize = new ResizeObserver(mark);
  resize.observe(node);
  return { mark, destroy: () => resize.disconnect() };
}
