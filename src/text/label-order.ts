/**
 * How dropdown labels are ordered and searched (docs/options.md), in one place: the collator
 * that sorts them, the folding that `q` matches against, and a sort key that a database can
 * order by byte-wise in exactly the collator's order, for the labels it covers.
 */

/** Labels sort case- and accent-insensitively, numbers as numbers ("Board 2" before "Board 10"). */
export const labelCollator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** Case- and accent-insensitive form for `q` (so `cafe` finds `Café`). */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * Sort keys: each character of a covered text becomes one ASCII character whose code is its
 * rank under `labelCollator` (at base strength a character's rank is all that compares), a run of
 * digits becomes a number token (a marker, its length without leading zeros, its digits), so
 * that comparing two keys byte by byte (SQLite BINARY, PostgreSQL COLLATE "C") gives the
 * collator's order; a key that is a prefix of another sorts first, as in the collator.
 *
 * Covered: printable ASCII; letters with combining accents (é = e + U+0301) as their base
 * letter; and a few letters and marks the collator treats as ASCII (ø as o, æ as ae, ’ as ').
 * Each of these is checked against the running collator when the module loads and dropped if it
 * disagrees, so a different ICU can only shrink what is covered. Anything else (other scripts,
 * symbols, control characters): no key, and the caller orders in memory instead.
 */
const rankBase = 0x21;
/** Below every rank: ends a key's part, so a shorter label sorts first (docs/options.md). */
export const keySeparator = ' ';
/** Longest digit run a key encodes (as the length character must stay one ASCII character). */
const maxDigits = 60;

const substitutes: Record<string, string> = {
  ø: 'o',
  Ø: 'o',
  æ: 'ae',
  Æ: 'ae',
  œ: 'oe',
  Œ: 'oe',
  ß: 'ss',
  ł: 'l',
  Ł: 'l',
  đ: 'd',
  Đ: 'd',
  ð: 'd',
  Ð: 'd',
  '\u2019': "'",
  '\u2018': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u2026': '...',
  '\u00a0': ' ',
};

interface Alphabet {
  /** Rank character of each printable ASCII character that is not a digit. */
  rank: Map<string, string>;
  /** Marks a number token. */
  number: string;
  /** Combining marks that weigh nothing at base strength. */
  marks: Set<string>;
  substitutes: Map<string, string>;
}

function alphabet(): Alphabet {
  const chars: string[] = [];
  for (let code = 0x20; code < 0x7f; code++) if (code < 0x30 || code > 0x39) chars.push(String.fromCharCode(code));
  chars.sort(labelCollator.compare);
  const rank = new Map<string, string>();
  let next = 0;
  let number = '';
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (i > 0 && labelCollator.compare(chars[i - 1]!, char) === 0) {
      rank.set(char, rank.get(chars[i - 1]!)!);
      continue;
    }
    // Digits (numbers) take the place the collator gives them among the other characters.
    if (!number && labelCollator.compare('0', char) < 0) number = String.fromCharCode(rankBase + next++);
    rank.set(char, String.fromCharCode(rankBase + next++));
  }
  if (!number) number = String.fromCharCode(rankBase + next);
  const marks = new Set<string>();
  for (let code = 0x300; code < 0x370; code++) {
    const mark = String.fromCharCode(code);
    if (labelCollator.compare(`a${mark}b`, 'ab') === 0 && labelCollator.compare(`a${mark}`, 'a') === 0) marks.add(mark);
  }
  const verified = Object.entries(substitutes).filter(
    ([char, ascii]) => labelCollator.compare(char, ascii) === 0 && labelCollator.compare(`x${char}y`, `x${ascii}y`) === 0,
  );
  return { rank, number, marks, substitutes: new Map(verified) };
}

const { rank, number, marks, substitutes: verifiedSubstitutes } = alphabet();

const isLetter = (char: string): boolean => /^[A-Za-z]$/.test(char);

/** The text's sort key, or null when the text has a character the key does not cover. */
export function sortKey(text: string): string | null {
  const chars = [...text.normalize('NFD')];
  let key = '';
  let afterLetter = false;
  for (let i = 0; i < chars.length;) {
    const char = chars[i]!;
    if (char >= '0' && char <= '9') {
      let end = i;
      while (end < chars.length && chars[end]! >= '0' && chars[end]! <= '9') end++;
      const digits = chars
        .slice(i, end)
        .join('')
        .replace(/^0+(?=\d)/, '');
      if (digits.length > maxDigits) return null;
      key += number + String.fromCharCode(rankBase + digits.length) + digits;
      afterLetter = false;
      i = end;
      continue;
    }
    i++;
    if (marks.has(char)) {
      if (!afterLetter) return null;
      continue;
    }
    const ascii = verifiedSubstitutes.get(char) ?? char;
    for (const c of ascii) {
      const r = rank.get(c);
      if (r === undefined) return null;
      key += r;
    }
    afterLetter = isLetter(ascii[ascii.length - 1]!);
  }
  return key;
}

/**
 * A device's key for a `{name}` label: name, then id, as the dropdown breaks ties on the
 * value; null when either is not covered.
 */
export function labelValueKey(label: string, value: string): string | null {
  const a = sortKey(label);
  const b = a === null ? null : sortKey(value);
  return b === null ? null : `${a}${keySeparator}${b}`;
}
