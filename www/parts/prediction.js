// The model's next-token prediction: the top candidates of the core's softmax over the whole
// vocabulary (the worker's `top`, Session.topTokens), drawn as bars on an absolute 0–1 scale so a
// 1 % guess looks like 1 %. The Output view and the pipeline's last step show a position's
// prediction with it; the KV cache view draws its decoding step's candidates with candidateBars.

import { el } from './dom.js';
import { bars } from './bars.js';
import { partOfCharacter, quoted, spaced, tokenText, percent } from './format.js';
import { t } from '../strings.js';

export const TOP = 10;

// MiniMind's chat format closes each message with this special token.
export const END_OF_MESSAGE = '<|im_end|>';

// The k most likely next tokens after position i of the logits tensor [T, V]: [{id, p, piece}].
export function predict(app, logits, i, k = TOP) {
  const [, V] = logits.shape;
  return app.call('top', { logits: logits.data.slice(i * V, (i + 1) * V), k });
}

// Candidates [{id, p, piece}] as bars; `mark` is the id to highlight (with `markNote` beside it).
export function candidateBars(top, { label, mark = null, markNote = null }) {
  return bars(
    top.map((c) => ({ label: `${tokenText(c.piece)} · id ${c.id}`, value: c.p, highlight: c.id === mark, note: c.id === mark ? markNote : null })),
    { label, format: percent },
  );
}

// A position's prediction as a block: heading, what it is computed from, the bars, and where the
// input goes on, its real next token (marked, or said to be outside the top k). `titled: false`
// leaves the heading out where a sentence above already says the prediction (the pipeline's last
// step); the bars keep it as their label.
export function predictionList(app, top, i, V, { titled = true } = {}) {
  const { ids, pieces } = app.state.tokens;
  const actual = i + 1 < ids.length ? ids[i + 1] : null;
  const heading = t('output.heading', { i, token: quoted(tokenText(pieces[i])) });
  const missing = actual !== null && !top.some((c) => c.id === actual);
  return el(
    'div',
    { className: 'prediction' },
    titled ? el('h3', {}, heading) : null,
    el('p', { className: 'hint' }, t('output.note', { v: V })),
    candidateBars(top, { label: heading, mark: actual, markNote: t('output.actual') }),
    missing ? el('p', { className: 'hint' }, t('output.actualMissing', { token: tokenText(pieces[i + 1]), k: top.length })) : null,
    ...candidateNotes(top, 'p', 'hint', pieces[i]),
  );
}

/**
 * What a newcomer needs told about candidates that are not words, as `tag` elements ('p' or, inside a
 * link, 'span') of `className`: a chat-format marker, a space or a line break (drawn as ␣ and ↵), and
 * part of a character (a token of some of a character's bytes).
 */
export function candidateNotes(top, tag, className = 'hint', after = null) {
  const whitespace = top.filter((c) => /^\s+$/.test(c.piece.replace(/^Ġ/, ' ')));
  const wordStarts = top.filter((c) => isWordStartPiece(c.piece));
  // After a token that ends in a letter, candidates with no space in front would go on its word.
  const afterText = after === null ? null : after.replace(/^Ġ/, ' ');
  // ("'m" after "I" always; letters only after two or more, where "I" + "B" would say little.)
  const tail = afterText === null ? '' : (/[A-Za-z]+$/.exec(afterText)?.[0] ?? '');
  const wordEnds = tail ? top.filter((c) => /^['’][A-Za-z]+$/.test(c.piece) || (tail.length >= 2 && /^[A-Za-z]+$/.test(c.piece))) : [];
  // A line break "after a finished sentence" is said only where the sentence has one.
  const finished = afterText === null || /[.!?。！？…"”』」]\s*$/.test(afterText);
  return [
    top.some((c) => c.piece === END_OF_MESSAGE) ? el(tag, { className, dataset: { note: 'end-of-message' } }, t('output.endOfMessage', { token: END_OF_MESSAGE })) : null,
    // What a line break after a sentence means is said only where a line break is among them.
    whitespace.length ? el(tag, { className, dataset: { note: 'whitespace' } }, [spaced(t('output.whitespace', { tokens: whitespace.map(whitespaceName).join(t('overview.listSep')) })), ...(finished && whitespace.some((c) => c.piece.includes('\n')) ? [t('output.lineAfter')] : [])].join('').trim()) : null,
    top.some((c) => partOfCharacter(c.piece)) ? el(tag, { className, dataset: { note: 'part' } }, t('output.partOfCharacter')) : null,
    wordEnds.length ? el(tag, { className, dataset: { note: 'word-end' } }, t('output.wordEnd', { tokens: wordEnds.map((c) => `“${tokenText(c.piece)}”`).join(t('overview.listSep')), after: tokenText(after), first: tokenText(wordEnds[0].piece), joined: tokenText(after + wordEnds[0].piece) })) : null,
    wordStarts.length ? el(tag, { className, dataset: { note: 'word-start' } }, t('output.wordStart', { tokens: wordStarts.map((c) => `“${tokenText(c.piece)}”`).join(t('overview.listSep')), piece: '␣f', rest: 'riend', word: '␣time' })) : null,
    // Candidates that tie exactly (a checkpoint whose numbers flatten every logit: all 1/V) have no
    // "most likely" among them: said so, and that their order is only that of their ids.
    top.length > 1 && top[0].p === top[1].p ? el(tag, { className, dataset: { note: 'tie' } }, t(top[0].p === top[top.length - 1].p ? 'output.tieAll' : 'output.tie', { p: percent(top[0].p) })) : null,
  ];
}

// English words of one or two letters, which a word-start token of that length usually is.
const SHORT_WORDS = new Set('a an am as at be by do go he i if in is it me my no of on or so to up us we'.split(' '));

// A token that starts an English word but is only one or two letters and no word of its own ("␣f",
// "␣ma"): most likely the first piece of a longer word, which BPE splits; said beside the candidates.
export function isWordStartPiece(piece) {
  const m = /^[ Ġ]([A-Za-z]{1,2})$/.exec(piece);
  return m !== null && !SHORT_WORDS.has(m[1].toLowerCase());
}

// A whitespace candidate as drawn, with what it is: “↵” (a line break), “␣” (a space).
function whitespaceName(c) {
  const token = tokenText(c.piece);
  return token.includes('↵') ? t('output.lineBreak', { token }) : token.startsWith('␣') ? t('output.space', { token }) : `“${token}”`;
}
