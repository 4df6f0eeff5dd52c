import type { Finding } from './guardrail-types.js';

/** Replaces each (non-overlapping) finding with a typed placeholder such as `[REDACTED_EMAIL]`. */
export function redactSpans(text: string, findings: readonly Finding[]): string {
  if (findings.length === 0) return text;
  const sorted = [...findings].sort((left, right) => left.start - right.start);
  const parts: string[] = [];
  let cursor = 0;
  for (const finding of sorted) {
    if (finding.start < cursor) continue;
    parts.push(text.slice(cursor, finding.start), placeholderFor(finding.type));
    cursor = finding.end;
  }
  parts.push(text.slice(cursor));
  return parts.join('');
}

export function placeholderFor(type: string): string {
  return `[REDACTED_${type.toUpperCase()}]`;
}
