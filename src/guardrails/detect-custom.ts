import type { Finding } from './guardrail-types.js';
import { isWordCharAt } from './scan-chars.js';

/** Compiled custom patterns (checked by assertSafeRegex when the guardrail was saved). */
export function compilePatterns(patterns: readonly string[], caseInsensitive: boolean): RegExp[] {
  return patterns.map((pattern) => new RegExp(pattern, caseInsensitive ? 'gi' : 'g'));
}

/**
 * A custom pattern runs on windows of at most REGEX_WINDOW characters, overlapping by REGEX_OVERLAP.
 * Even a pattern assertSafeRegex admits, such as `[a-z]+@corp`, tries every start against the rest of
 * a long run of letters: quadratic in the run, minutes on a megabyte. Windows bound that to
 * REGEX_WINDOW steps per character. A match touching a window's inner edge, where `\b`, `^` or `$`
 * would see a cut instead of the text, is taken from the neighbouring window that sees it with its
 * context; so a match up to REGEX_OVERLAP - 2 characters long is found exactly as on the whole text,
 * and a longer one that crosses an edge is found only in part.
 */
export const REGEX_WINDOW = 1024;
export const REGEX_OVERLAP = 256;

export function regexWindows(length: number): Array<{ start: number; end: number }> {
  const windows: Array<{ start: number; end: number }> = [];
  for (let start = 0; ; start += REGEX_WINDOW - REGEX_OVERLAP) {
    const end = Math.min(start + REGEX_WINDOW, length);
    windows.push({ start, end });
    if (end === length) return windows;
  }
}

export function detectRegex(text: string, patterns: readonly RegExp[], type: string): Finding[] {
  const findings: Finding[] = [];
  const windows = regexWindows(text.length);
  for (const pattern of patterns) {
    let reach = 0;
    for (const [position, window] of windows.entries()) {
      const previousEnd = windows[position - 1]?.end ?? -Infinity;
      const nextStart = windows[position + 1]?.start ?? Infinity;
      for (const match of text.slice(window.start, window.end).matchAll(new RegExp(pattern))) {
        // An empty match marks nothing and would loop forever in a manual exec loop; matchAll advances past it.
        if (match[0].length === 0) continue;
        const start = window.start + match.index;
        const end = start + match[0].length;
        if (start < reach) continue; // already found in the previous window's overlap
        if (start === window.start && end < previousEnd) continue; // the previous window saw it with its left context
        if (end === window.end && start > nextStart) continue; // the next window sees it with its right context

        findings.push({ start, end, type });
        reach = end;
      }
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
