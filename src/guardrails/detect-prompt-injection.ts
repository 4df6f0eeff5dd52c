import type { Finding } from './guardrail-types.js';
import { PROMPT_INJECTION_RULES } from './prompt-injection-rules.js';

export const DEFAULT_INJECTION_THRESHOLD = 0.8;

export interface InjectionAssessment {
  score: number;
  rules: string[];
  /** Spans in the original text (per matched rule), for redaction. */
  findings: Finding[];
}

/**
 * Scores a text against the prompt-injection rule set. The text is normalised in one linear pass
 * (lower case, NFKC so look-alike letters fold, invisible characters dropped, every other non-letter
 * run folded to a single space) while keeping a map back to original offsets.
 */
export function assessPromptInjection(text: string): InjectionAssessment {
  const { normalized, offsets } = normalizeForRules(text);
  let score = 0;
  const rules: string[] = [];
  const findings: Finding[] = [];
  for (const rule of PROMPT_INJECTION_RULES) {
    const match = rule.pattern.exec(normalized);
    if (!match) continue;
    score += rule.weight;
    rules.push(rule.id);
    const start = offsets[match.index] ?? 0;
    const lastIndex = match.index + match[0].length - 1;
    const end = lastIndex >= 0 && lastIndex < offsets.length ? offsets[lastIndex] + 1 : text.length;
    findings.push({ start, end: Math.max(end, start), type: 'prompt_injection' });
  }
  return { score: Math.round(score * 100) / 100, rules, findings };
}

const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF\u00AD]/;

function normalizeForRules(text: string): { normalized: string; offsets: number[] } {
  const characters: string[] = [];
  const offsets: number[] = [];
  let lastWasSpace = true;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    const raw = character.charCodeAt(0);
    if (raw >= 128 && INVISIBLE.test(character)) continue;
    // ASCII needs no Unicode folding; the per-character normalize only runs for the rest.
    const folded = raw < 128 ? (raw >= 65 && raw <= 90 ? String.fromCharCode(raw + 32) : character) : character.normalize('NFKC').toLowerCase();
    const code = folded.charCodeAt(0);
    const keep = folded.length === 1 && ((code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 39);
    if (keep) {
      characters.push(folded);
      offsets.push(index);
      lastWasSpace = false;
    } else if (!lastWasSpace) {
      characters.push(' ');
      offsets.push(index);
      lastWasSpace = true;
    }
  }
  return { normalized: characters.join(''), offsets };
}
