import { GatewayError } from '../errors/gateway-error.js';

/**
 * Admission check for custom guardrail patterns. JavaScript's regex engine backtracks, so a pattern
 * such as `(a+)+$` takes exponential time on hostile input. We reject the shapes that cause it:
 * a quantified group that itself contains a quantifier or an alternation, backreferences, and
 * lookarounds; and we allow at most two unbounded quantifiers, which keeps the worst case polynomial
 * of low degree over the texts we check. Throws 400 invalid_request naming the pattern.
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
  // Per open group: does it contain a quantifier or an alternation?
  const groups: Array<{ risky: boolean }> = [];
  let unbounded = 0;
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '\\') {
      const next = pattern[index + 1] ?? '';
      if (/[1-9k]/.test(next) && !inClass) reject('backreferences are not allowed');
      index++;
      continue;
    }
    if (inClass) {
      if (character === ']') inClass = false;
      continue;
    }
    if (character === '[') {
      inClass = true;
      continue;
    }
    if (character === '(') {
      if (pattern.startsWith('(?=', index) || pattern.startsWith('(?!', index) || pattern.startsWith('(?<=', index) || pattern.startsWith('(?<!', index)) {
        reject('lookarounds are not allowed');
      }
      groups.push({ risky: false });
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
      continue;
    }
    if (quantifier) {
      if (quantifier.unbounded) unbounded++;
      if (groups.length > 0) groups[groups.length - 1].risky = true;
      index += quantifier.length - 1;
    }
  }
  if (unbounded > 2) reject('at most two unbounded quantifiers (*, +, {n,}) are allowed');
}

function readQuantifier(pattern: string, index: number): { unbounded: boolean; length: number } | undefined {
  const character = pattern[index];
  if (character === '*' || character === '+') return { unbounded: true, length: pattern[index + 1] === '?' ? 2 : 1 };
  if (character === '?') return { unbounded: false, length: 1 };
  if (character === '{') {
    const close = pattern.indexOf('}', index);
    if (close < 0) return undefined;
    const body = pattern.slice(index + 1, close);
    if (!/^\d+(,\d*)?$/.test(body)) return undefined;
    return { unbounded: body.endsWith(','), length: close - index + 1 };
  }
  return undefined;
}
