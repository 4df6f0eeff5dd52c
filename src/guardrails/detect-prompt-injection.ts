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
 * (lower case; NFKC, which folds compatibility forms such as full-width letters; Cyrillic and Greek
 * letters that look like Latin ones folded to those, which NFKC does not do; invisible characters
 * dropped; every other non-letter run folded to a single space) while keeping a map back to original offsets.
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

/**
 * Cyrillic and Greek letters drawn like Latin ones (Unicode TR39 confusables, the common prototypes),
 * so `Ignоre` with a Cyrillic о reads as `ignore`. Capitals are listed apart because their lower-case
 * forms do not all look Latin (В→b, but в does not), and Russian or Greek text keeps its other letters,
 * which are not Latin letters and so still break words apart: ordinary prose does not become English.
 */
const CONFUSABLE_LATIN: ReadonlyMap<string, string> = new Map(
  Object.entries({
    // Cyrillic capitals and small letters
    А: 'a', В: 'b', С: 'c', Е: 'e', Н: 'h', І: 'i', Ј: 'j', К: 'k', М: 'm', О: 'o', Р: 'p', Ѕ: 's', Т: 't', Х: 'x', Ү: 'y', Ԁ: 'd', Ӏ: 'l',
    а: 'a', с: 'c', ԁ: 'd', е: 'e', һ: 'h', і: 'i', ј: 'j', ӏ: 'l', о: 'o', р: 'p', ԛ: 'q', ѕ: 's', ԝ: 'w', х: 'x', у: 'y',
    // Greek capitals and small letters
    Α: 'a', Β: 'b', Ε: 'e', Ζ: 'z', Η: 'h', Ι: 'i', Κ: 'k', Μ: 'm', Ν: 'n', Ο: 'o', Ρ: 'p', Τ: 't', Υ: 'y', Χ: 'x',
    α: 'a', ε: 'e', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x',
  }),
);

function foldToLatin(character: string): string {
  const confusable = CONFUSABLE_LATIN.get(character);
  if (confusable) return confusable;
  const folded = character.normalize('NFKC').toLowerCase();
  return CONFUSABLE_LATIN.get(folded) ?? folded;
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
    // ASCII needs no Unicode folding; the per-character folding only runs for the rest.
    const folded = raw < 128 ? (raw >= 65 && raw <= 90 ? String.fromCharCode(raw + 32) : character) : foldToLatin(character);
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
