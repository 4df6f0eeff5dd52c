import type { Finding } from './guardrail-types.js';
import { isWordCharAt } from './scan-chars.js';

/** Compiled custom patterns (checked by assertSafeRegex when the guardrail was saved). */
export function compilePatterns(patterns: readonly string[], caseInsensitive: boolean): RegExp[] {
  return patterns.map((pattern) => new RegExp(pattern, caseInsensitive ? 'gi' : 'g'));
}

export function detectRegex(text: string, patterns: readonly RegExp[], type: string): Finding[] {
  const findings: Finding[] = [];
  for (const pattern of patterns) {
    for (const match of text.matchAll(new RegExp(pattern))) {
      // An empty match marks nothing and would loop forever in a manual exec loop; matchAll advances past it.
      if (match[0].length === 0) continue;
      findings.push({ start: match.index, end: match.index + match[0].length, type });
    }
  }
  return findings;
}

/** Case-insensitive literal search (indexOf, no regex), optionally whole words only. */
export function detectDenyList(text: string, terms: readonly string[], wholeWords: boolean, type: string): Finding[] {
  const haystack = text.toLowerCase();
  const findings: Finding[] = [];
  // toLowerCase can change length for a few characters; offsets then map only approximately, so fall back to the whole text.
  const sameLength = haystack.length === text.length;
  for (const term of terms) {
    const needle = term.toLowerCase();
    if (needle.length === 0) continue;
    let from = 0;
    for (let at = haystack.indexOf(needle, from); at >= 0; at = haystack.indexOf(needle, from)) {
      const end = at + needle.length;
      from = end;
      if (wholeWords && (isWordCharAt(haystack, at - 1) || isWordCharAt(haystack, end))) continue;
      findings.push(sameLength ? { start: at, end, type } : { start: 0, end: text.length, type });
    }
  }
  return findings;
}
