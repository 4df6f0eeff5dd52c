import { GatewayError } from '../errors/gateway-error.js';

/**
 * Admission check for custom guardrail patterns. JavaScript's regex engine backtracks, so a pattern
 * such as `(a+)+$` takes exponential time on hostile input, and `a*a*b` or `a{0,120}a{0,120}a{0,120}b`
 * cubic time (seconds on a few kilobytes of `a`). We reject the shapes that cause it:
 * - a quantified group that itself contains a quantifier or an alternation, backreferences, lookarounds;
 * - more than two long quantifiers: unbounded (`*`, `+`, `{n,}`) or with an upper bound over
 *   LONG_REPEAT (`{0,120}` backtracks through as many splits as `*` does over such a stretch);
 * - two long quantifiers whose atoms can match the same character with no required atom between them
 *   that the first cannot match: the engine would try every split of a stretch between them;
 * - short variable quantifiers (`?`, `{2,4}`) whose choice counts multiply past MAX_SHORT_CHOICES.
 * What is left costs at most a bounded number of steps per character per long quantifier.
 * Throws 400 invalid_request naming the pattern.
 */
export function assertSafeRegex(pattern: string, flags = ''): void {
  const reject = (reason: string): never => {
    throw new GatewayError('invalid_request', `Unsafe guardrail pattern ${JSON.stringify(pattern)}: ${reason}.`, { param: 'config.patterns' });
  };
  try {
    new RegExp(pattern, flags);
  } catch {
    reject('not a valid regular expression');
  }
  // Per open group: does it contain a quantifier or an alternation? And where does it start?
  const groups: Array<{ risky: boolean; start: number }> = [];
  const atoms: Atom[] = [];
  let inClass = false;
  let classStart = 0;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '\\') {
      const next = pattern[index + 1] ?? '';
      if (/[1-9k]/.test(next) && !inClass) reject('backreferences are not allowed');
      const length = escapeLength(pattern, index);
      // \b and \B match between characters: they are no atom and separate nothing.
      if (!inClass && next !== 'b' && next !== 'B') atoms.push({ text: pattern.slice(index, index + length), min: 1, max: 1 });
      index += length - 1;
      continue;
    }
    if (inClass) {
      if (character === ']') {
        inClass = false;
        atoms.push({ text: pattern.slice(classStart, index + 1), min: 1, max: 1 });
      }
      continue;
    }
    if (character === '[') {
      inClass = true;
      classStart = index;
      continue;
    }
    if (character === '(') {
      if (pattern.startsWith('(?=', index) || pattern.startsWith('(?!', index) || pattern.startsWith('(?<=', index) || pattern.startsWith('(?<!', index)) {
        reject('lookarounds are not allowed');
      }
      groups.push({ risky: false, start: index });
      continue;
    }
    if (character === '|') {
      if (groups.length > 0) groups[groups.length - 1].risky = true;
      continue;
    }
    const quantifier = readQuantifier(pattern, index);
    if (character === ')') {
      const group = groups.pop();
      const after = readQuantifier(pattern, index + 1);
      if (after && group?.risky) reject('a repeated group must not contain a quantifier or an alternation');
      if (groups.length > 0 && (group?.risky || after)) groups[groups.length - 1].risky = true;
      // A group is one atom to what follows; its inner atoms were recorded as they came.
      atoms.push({ text: pattern.slice(group?.start ?? 0, index + 1), min: 1, max: 1, group: true });
      continue;
    }
    if (quantifier) {
      const atom = atoms[atoms.length - 1];
      if (atom) Object.assign(atom, { min: quantifier.min, max: quantifier.max });
      if (groups.length > 0) groups[groups.length - 1].risky = true;
      index += quantifier.length - 1;
      continue;
    }
    if (character !== '^' && character !== '$') atoms.push({ text: character, min: 1, max: 1 });
  }
  checkRepetition(atoms, flags, reject);
}

/** Upper bounds above this backtrack like `*`; 16 keeps `\d{2,4}`, `[A-Z]{2}` and the like short. */
const LONG_REPEAT = 16;
/** Ways a pattern's short variable quantifiers may split a stretch of text (e.g. eight `?`). */
const MAX_SHORT_CHOICES = 256;

interface Atom {
  text: string;
  min: number;
  max: number;
  group?: boolean;
}

function checkRepetition(atoms: readonly Atom[], flags: string, reject: (reason: string) => never): void {
  const long = atoms.map((atom, index) => ({ atom, index })).filter(({ atom }) => atom.max > LONG_REPEAT);
  if (long.length > 2) reject(`at most two long quantifiers (*, +, {n,} or an upper bound over ${LONG_REPEAT}) are allowed`);
  for (let first = 0; first < long.length; first++) {
    for (let second = first + 1; second < long.length; second++) {
      const earlier = long[first];
      const later = long[second];
      const between = atoms.slice(earlier.index + 1, later.index);
      const separated = between.some((atom) => atom.min >= 1 && !atom.group && !canOverlap(atom.text, earlier.atom.text, flags));
      if (!separated && canOverlap(earlier.atom.text, later.atom.text, flags)) {
        reject('two long quantifiers that can match the same characters need a required character between them that the first cannot match');
      }
    }
  }
  let choices = 1;
  for (const atom of atoms) if (atom.max > atom.min && atom.max <= LONG_REPEAT) choices *= atom.max - atom.min + 1;
  if (choices > MAX_SHORT_CHOICES) reject(`short optional or ranged quantifiers allow too many combinations (${choices}, at most ${MAX_SHORT_CHOICES})`);
}

/** Characters tried when asking whether two atoms can match the same one: ASCII and a few beyond. */
const SAMPLE_CHARACTERS = [...Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)), '\u00A0', '\u00E9', '\u0416', '\u2028', '\u4E2D'];

/**
 * Whether two atoms can match a common character, found by trying sample characters. An atom that
 * is a group, or does not compile alone, is assumed to overlap everything (the safe answer).
 */
function canOverlap(left: string, right: string, flags: string): boolean {
  const single = (atom: string): RegExp | undefined => {
    if (atom.startsWith('(')) return undefined;
    try {
      return new RegExp(`^(?:${atom})$`, flags.replace(/[gy]/g, ''));
    } catch {
      return undefined;
    }
  };
  const leftRegex = single(left);
  const rightRegex = single(right);
  if (!leftRegex || !rightRegex) return true;
  return SAMPLE_CHARACTERS.some((character) => leftRegex.test(character) && rightRegex.test(character));
}

/** Length of the escape at `index`: `\u{…}`, `\p{…}`, `\uXXXX`, `\xXX`, `\cX`, else two characters. */
function escapeLength(pattern: string, index: number): number {
  const next = pattern[index + 1];
  if ((next === 'u' || next === 'p' || next === 'P') && pattern[index + 2] === '{') {
    const close = pattern.indexOf('}', index);
    return close < 0 ? 2 : close - index + 1;
  }
  if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(pattern.slice(index + 2, index + 6))) return 6;
  if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(pattern.slice(index + 2, index + 4))) return 4;
  if (next === 'c' && /^[A-Za-z]$/.test(pattern[index + 2] ?? '')) return 3;
  return 2;
}

function readQuantifier(pattern: string, index: number): { min: number; max: number; length: number } | undefined {
  const character = pattern[index];
  const lazy = (at: number) => (pattern[at] === '?' ? 1 : 0);
  if (character === '*') return { min: 0, max: Infinity, length: 1 + lazy(index + 1) };
  if (character === '+') return { min: 1, max: Infinity, length: 1 + lazy(index + 1) };
  if (character === '?') return { min: 0, max: 1, length: 1 + lazy(index + 1) };
  if (character === '{') {
    const close = pattern.indexOf('}', index);
    if (close < 0) return undefined;
    const body = pattern.slice(index + 1, close);
    const bounds = /^(\d+)(,(\d*))?$/.exec(body);
    if (!bounds) return undefined;
    const min = Number(bounds[1]);
    const max = bounds[2] === undefined ? min : bounds[3] === '' ? Infinity : Number(bounds[3]);
    return { min, max, length: close - index + 1 + lazy(close + 1) };
  }
  return undefined;
}
