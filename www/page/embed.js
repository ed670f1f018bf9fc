// An embedded page ("&embed=1", in an iframe or <attn-scope>): it tells its parent the height its
// content needs, folds its model panel, and says what sentence (and head) its figure is of where its
// author hid the input or the view's controls. The phone's one-line sentence is drawn here too.
// A click in an embed adds no entry to the host page's history (its own links replace its address),
// and a click that takes the figure to another view (a head grid's thumbnail to its map) says so in a
// line with a button back to the figure as its author (or the host page's script) last set it.

import { el } from '../parts/dom.js';
import { t } from '../strings.js';
import { reportHeight } from '../api.js';

// An embed is a figure: its model panel (when the author left it in) is folded to its heading, which
// opens it, so that the view and the text box keep the iframe's height (share.css).
// The heading stays a heading (the panel's label); a disclosure button inside it holds its words.
function foldModelPanel() {
  const panel = document.querySelector('[data-hideable="config"]');
  const heading = panel?.querySelector('.panel-heading');
  if (!heading) return;
  const button = el('button', { type: 'button', className: 'panel-fold', attrs: { 'aria-expanded': 'false' } }, ...heading.childNodes);
  button.addEventListener('click', () => button.setAttribute('aria-expanded', String(panel.classList.toggle('open'))));
  heading.replaceChildren(button);
}

export function embedChrome(page) {
  const { state, dom, embed } = page;
  // The line that says the reader has left the figure's view, with its way back.
  const back = el('p', { className: 'embed-back', attrs: { role: 'status' } });
  dom.caption.after(back);

  // The height an embedded page's content needs (share.css fits the view and the input panel into the
  // iframe, each scrolling in its own box): the page as laid out now, with those two at their content's
  // height. <attn-scope> without a height sizes its iframe to it.
  function naturalHeight() {
    const sidebar = document.querySelector('.sidebar');
    return document.documentElement.scrollHeight + (contentHeight(dom.view) - dom.view.clientHeight) + (sidebar.scrollHeight - sidebar.clientHeight);
  }
  // A box's content as tall as it is laid out: from the box's top to its last child's bottom margin
  // (the margins between its children counted, as a sum of their heights left them out), with its padding.
  function contentHeight(box) {
    const last = [...box.children].reverse().find((child) => child.getClientRects().length > 0);
    if (!last) return 0;
    const top = box.getBoundingClientRect().top + box.clientTop - box.scrollTop;
    return last.getBoundingClientRect().bottom + parseFloat(getComputedStyle(last).marginBottom) - top + parseFloat(getComputedStyle(box).paddingBottom);
  }

  return {
    /** Marks the page as an embed (share.css) and, if it is one, sizes and folds it. */
    setUp() {
      document.documentElement.classList.toggle('embed', embed);
      if (embed) {
        reportHeight(naturalHeight);
        foldModelPanel();
        // A plain link to a place on the page ("#view=…") replaces the address, as navigate() does.
        document.addEventListener('click', (event) => {
          const link = event.target.closest?.('a[href^="#"]');
          if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
          const href = link.getAttribute('href');
          if (href === '#') return;
          event.preventDefault();
          location.replace(href);
        });
      }
    },
    // The figure as its author set it: the state first opened, or the one the host page last asked
    // for (a new state attribute, setState); the address.js publish() marks it.
    figure(now) {
      if (!embed) return;
      if (!page.figure) page.figure = structuredClone(now);
      const figure = page.figure;
      if (now.view === figure.view) {
        back.replaceChildren();
        return;
      }
      const view = t(`view.${figure.view}`);
      const button = el('button', { type: 'button', className: 'link embed-back-button', on: { click: () => page.opener.open(structuredClone(figure)) } }, t('embed.back', { view }));
      back.replaceChildren(t('embed.changed', { view }), ' ', button);
    },
    // An embed whose author hid the input still says what sentence its figure is of, on one line
    // (share.css shows it only there; the whole text is its tooltip).
    sentence() {
      // The reader's text in a <bdi>: a right-to-left override in it cannot turn the quote marks around
      // it, or what follows, backwards.
      const [before, after] = t('embed.sentence', { text: '\u0000' }).split('\u0000');
      const line = () => [before, el('bdi', {}, state.text), after];
      const said = embed && state.hide.includes('input') && state.text;
      dom.sentence.replaceChildren(...(said ? line() : []));
      dom.sentence.title = said ? t('embed.sentence', { text: state.text }) : '';
      // On a phone the input panel comes after the view: the sentence is said at the top, with a
      // button to the text box (style.css shows this line only on a narrow page, never in an embed).
      dom.phoneSentence.firstElementChild.replaceChildren(...line());
      // An embed whose author hid the view's controls still says which head (and the attention map's
      // stage) its figure shows, where the view shows one head (it has a head picker).
      const oneHead = embed && state.hide.includes('toolbar') && dom.view.querySelector(':scope > * > .toolbar select[name="head"]');
      dom.caption.textContent = oneHead ? [t('embed.head', { l: state.layer, h: state.head }), state.view === 'attention' ? t(`stage.${state.stage}`) : null].filter(Boolean).join(' · ') : '';
    },
  };
}
