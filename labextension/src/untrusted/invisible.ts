/**
 * Characters that do not show, or that change how the text around them shows (bidi
 * overrides: "Trojan Source"), found so that code a person reviews shows every one of them.
 * Pure: no DOM.
 */

/** Names of the invisible characters a reviewer most likely meets. */
const NAMES: { [codePoint: number]: string } = {
  0x0d: 'carriage return',
  0x00ad: 'soft hyphen',
  0x061c: 'Arabic letter mark',
  0x200b: 'zero width space',
  0x200c: 'zero width non-joiner',
  0x200d: 'zero width joiner',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x2028: 'line separator',
  0x2029: 'paragraph separator',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2060: 'word joiner',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xfeff: 'zero width no-break space'
};

/** Inclusive ranges of code points that show nothing (or reorder what is around them). */
const RANGES: [number, number][] = [
  [0x00, 0x08],
  [0x0b, 0x1f], // C0 controls but tab and newline
  [0x7f, 0x9f], // DEL and C1 controls
  [0xad, 0xad],
  [0x034f, 0x034f], // combining grapheme joiner
  [0x061c, 0x061c],
  [0x115f, 0x1160], // Hangul fillers (look like nothing, valid in identifiers)
  [0x17b4, 0x17b5],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0x3164, 0x3164],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff9, 0xfffb],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe007f] // tag characters ("ASCII smuggling")
];

/** Whether `codePoint` shows nothing (or reorders the text around it). */
export function isInvisible(codePoint: number): boolean {
  return RANGES.some(([low, high]) => codePoint >= low && codePoint <= high);
}

/** "U+202E" for 0x202e. */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What a reviewer is told about one invisible character, e.g. "U+202E right-to-left override". */
export function describeInvisible(codePoint: number): string {
  const name = NAMES[codePoint];
  return name
    ? `${codePointLabel(codePoint)} ${name}`
    : codePointLabel(codePoint);
}

/** A run of ordinary text, or one invisible character. */
export type TextPiece =
  { kind: 'text'; text: string } | { kind: 'invisible'; codePoint: number };

/** `text` cut into runs of ordinary text and its invisible characters, one piece each. */
export function splitInvisible(text: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let run = '';
  for (const char of text) {
    const codePoint = char.codePointAt(0)!;
    if (isInvisible(codePoint)) {
      if (run) {
        pieces.push({ kind: 'text', text: run });
        run = '';
      }
      pieces.push({ kind: 'invisible', codePoint });
    } else {
      run += char;
    }
  }
  if (run) {
    pieces.push({ kind: 'text', text: run });
  }
  return pieces;
}

/** How many invisible characters `text` holds. */
export function countInvisible(text: string): number {
  let count = 0;
  for (const char of text) {
    if (isInvisible(char.codePointAt(0)!)) {
      count++;
    }
  }
  return count;
}
