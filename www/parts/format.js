// How numbers, shapes and token pieces are written on screen, in the page's language.
// Shapes follow MiniMind's own debug prints: the batch dimension 1 comes first ([1, 6, 8, 96]),
// while the trace itself (docs/trace-contract.md) drops it.

import { language, t } from '../strings.js';

// The shortest decimal that reads back as the same f32: what a tooltip calls the "exact" value.
export function exact(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '-∞';
  for (let p = 1; p <= 9; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s));
  }
  return String(v);
}

// A compact value for legends and row sums.
export function short(v) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(1).replace('-', '−');
  return (+v.toPrecision(3)).toString().replace('-', '−');
}

// A value with a fixed number of decimals, as the seeds print them (0.4925, 1.46); masks by name.
/** A probability as a percentage, as the page writes every next-token probability: 49.8%, 5.98%. */
// A probability as a percentage; one too small to show at two decimals is "<0.01%", not a "0.00%"
// that reads as impossible (an exact 0 stays 0.00%).
export const percent = (p) => (!Number.isFinite(p) ? "—" : p > 0 && p < 0.00005 ? "<0.01%" : `${(p * 100).toFixed(p >= 0.1 ? 1 : 2)}%`);

export function fixed(v, digits = 3) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  if (Math.abs(v) >= 1e8) return short(v); // −1e9 (a padding mask) and a lesson’s huge edits alike: 4.0e+12, never 13 digits
  return v.toFixed(digits).replace('-', '−');
}

// A number written as a factor of a product: negative ones in parentheses, (−0.25)×(−1.2).
export function factor(text, v) {
  return v < 0 ? `(${text})` : text;
}

// Bytes in binary units: 24576 → "24 KiB".
export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${+n.toPrecision(4)} ${units[u]}`;
}

// A large count, as each language groups digits: 533 k / 6.3 M in English, 53.3 万 / 1.2 亿 in Chinese
// (the Chinese strings write the measure word straight after it: 53.3 万个).
export function count(n) {
  const units = language() === 'zh' ? [[1e8, ' 亿'], [1e4, ' 万']] : [[1e6, ' M'], [1e3, ' k']];
  for (const [size, unit] of units) if (n >= size) return `${+(n / size).toPrecision(3)}${unit}`;
  return String(n);
}

// A whole number in running text: 6,400 in English; 6400 in Chinese, which groups digits in fours
// (万) and writes a four- or five-digit number plainly, as the rest of the Chinese page does.
export function grouped(n) {
  return language() === 'zh' && Math.abs(n) < 1e5 ? String(n) : n.toLocaleString('en-US');
}

/** An element's index in a traced tensor, batch first as its shapeLabel: [0, h, i, j] beside [1, nH, T, S]. */
export function indexLabel(...index) {
  return `[0, ${index.join(', ')}]`;
}

export function shapeLabel(shape) {
  return `[1, ${shape.join(', ')}]`;
}

// Token pieces as shown on chips and axes: a leading space becomes a visible "␣", other whitespace
// is escaped, and long pieces are cut for axis labels. The core already wrote a character cut over
// several tokens as the character with its part (昨¹ 昨²; tokenizer.rs), so no raw bytes reach here.
export function tokenText(piece) {
  const part = partOfCharacter(piece);
  if (part) return part;
  // A whole character with part of the next one's bytes (的<E6>, a prediction out of context), or
  // the end of one before a whole one: the bytes as the part marks write them (的‹E6…›).
  const mixed = /^(.+?)<([0-9A-F]{2}(?: [0-9A-F]{2})*)>$/s.exec(piece) ?? /^<([0-9A-F]{2}(?: [0-9A-F]{2})*)>(.+)$/s.exec(piece);
  if (mixed) return piece.startsWith('<') ? `${partShort(mixed[1])}${tokenText(mixed[2])}` : `${tokenText(mixed[1])}${partShort(mixed[2])}`;
  return visible(piece.replace(/^[ Ġ]/, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥'));
}

/**
 * Characters that draw nothing, or a box of the font's missing glyph, written visibly: a control
 * character as its control picture (U+0000 ␀, U+001B ␛, U+007F ␡), a zero-width or separator one
 * (U+200B, U+2028, U+FEFF …) as its code point.
 */
export function visible(text) {
  return text
    .replace(/[\u0000-\u001f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)))
    .replace(/\u007f/g, '␡')
    .replace(/[\u0080-\u009f\u00ad\u034f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g, (c) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`)
    // Variation selectors and tag characters on their own (a token of an emoji's ️ alone, before a
    // cut character's ¹ ²) draw nothing either; beside the character they modify they stay as they are.
    .replace(/^[\ufe00-\ufe0f\u{e0020}-\u{e007f}\u{e0100}-\u{e01ef}]+(?=[¹²³⁴]*$)/u, (run) => [...run].map((c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(''));
}

// A token alone that holds only part of a character's UTF-8 bytes (the core writes it <E6 A3>: a
// prediction, a generated token, out of the context that would finish the character): said as part
// of a character, its bytes kept, never as a bare <E6 A3>. A first byte 80–BF continues a character
// begun in an earlier token. Other pieces: null.
const BYTE_PIECE = /^<([0-9A-F]{2}(?: [0-9A-F]{2})*)>$/;
function partShort(bytes) {
  const continues = parseInt(bytes, 16) >= 0x80 && parseInt(bytes, 16) < 0xc0;
  return continues ? `‹…${bytes}›` : `‹${bytes}…›`;
}

export function partOfCharacter(piece) {
  const found = BYTE_PIECE.exec(piece);
  if (!found) return null;
  const bytes = found[1];
  const continues = parseInt(bytes, 16) >= 0x80 && parseInt(bytes, 16) < 0xc0;
  return t(continues ? 'token.partEnd' : 'token.partStart', { bytes });
}

// Special tokens as MiniMind's tokenizer writes them (<|im_start|>, the input's BOS token) stay
// whole on an axis: cut to "<|im_st…" they would read as broken text.
const SPECIAL_PIECE = /^<\|[^|\s]+\|>$/;

// A part of a character is cut to its bytes on an axis, ‹E8 97…›: "半个字（E…" said nothing.
export function axisLabel(piece, max = 10) {
  const part = BYTE_PIECE.exec(piece);
  if (part) return partShort(part[1]);
  const text = tokenText(piece);
  return text.length > max && !SPECIAL_PIECE.test(piece) ? `${text.slice(0, max - 1)}…` : text;
}

/** The space between a label and the value after it: none after Chinese full-width punctuation (“熵：1.2”), one otherwise. */
export function gap(label) {
  return /[\u3000-\u303f\uff00-\uffef]$/.test(label) ? '' : ' ';
}

/** A label with the space that follows it before a value or the next sentence, where a space belongs (gap). */
export function spaced(label) {
  return `${label}${gap(label)}`;
}

/**
 * The number a reader typed in one box, as numberList reads each of its numbers (a Chinese keyboard's
 * ０．５, －１, even 0。5), or NaN: an empty box included.
 */
export function typedNumber(text) {
  const plain = text.normalize('NFKC').replace(/\u2212/g, '-').replace(/\u3002/g, '.').trim();
  // Decimal notation only: Number() would also read 0x10 as 16, 0b11 as 3 and "Infinity".
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(plain) ? Number(plain) : NaN;
}

/**
 * The numbers a reader typed in a field, as a list: separated by commas (, ， 、) or spaces, with
 * full-width digits and signs (a Chinese keyboard's １，－２) and the minus sign − read as their ASCII
 * forms. Anything that is not a number comes back as NaN, for the field to flag.
 */
export function numberList(text) {
  return text
    .normalize('NFKC')
    .replace(/\u2212/g, '-')
    .split(/[,，、\s]+/)
    .filter(Boolean)
    .map(Number);
}

/**
 * A token in quotation marks for a sentence: “…”, or where the token itself is a double quote mark
 * (“ ” "), 「…」 in Chinese and ‘…’ in English, so the marks do not pile up as “””.
 */
export function quoted(token) {
  if (!/[“”"]/.test(token)) return `“${token}”`;
  return language() === 'zh' ? `「${token}」` : `‘${token}’`;
}

/** A number as the formulas write it: a power of ten as one (1000000 → 10⁶), others grouped (500000 → 500,000). */
export function powerOfTen(n) {
  const exponent = Math.round(Math.log10(n));
  if (n >= 100 && 10 ** exponent === n) return `10${[...String(exponent)].map((d) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[d]).join('')}`;
  return grouped(n);
}

/** What the marks on these pieces stand for, only those that occur: "␣ marks a space before a word; ↵ marks a line break." ('' for none). */
export function marksNote(pieces) {
  const has = (test) => pieces.some((p) => test.test(p));
  const part = pieces.map((p) => BYTE_PIECE.exec(p)).find(Boolean);
  // A character read across tokens in context carries a superscript per part (扇¹ 扇²).
  const split = pieces.find((p) => /[^¹²³⁴][¹²³⁴]$/.test(p));
  const marks = [has(/^[ Ġ]/) && 'space', has(/\n|Ċ/) && 'newline', has(/\t|ĉ/) && 'tab', part && 'part', split && 'split'].filter(Boolean);
  const example = (m) => (m === 'split' ? visible(split.replace(/[¹²³⁴]$/, '')) : part ? partShort(part[1]) : '');
  return marks.length ? `${marks.map((m) => t(`marks.${m}`, { example: example(m) })).join(t('marks.join'))}${t('marks.end')}` : '';
}
