import type { Finding } from './guardrail-types.js';
import { withoutOverlaps } from './detect-pii.js';
import { isAlphanumeric, isDigit, isLower, isUpper, isWordCharAt } from './scan-chars.js';

/**
 * Credential formats of the common providers. Each pattern starts with a literal prefix and has
 * only bounded repetition with nothing after it that can fail, so the regex engine's work per start
 * position is bounded and the scan stays linear on hostile input.
 */
const PREFIXED_SECRETS: ReadonlyArray<{ type: string; pattern: RegExp }> = [
  { type: 'anthropic_key', pattern: /sk-ant-[A-Za-z0-9]{2,12}-[A-Za-z0-9_-]{32,200}/g },
  { type: 'openai_key', pattern: /sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}/g },
  { type: 'aws_access_key', pattern: /(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}/g },
  { type: 'github_token', pattern: /(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}/g },
  { type: 'github_token', pattern: /github_pat_[A-Za-z0-9_]{22,255}/g },
  { type: 'slack_token', pattern: /xox[abprse]-[A-Za-z0-9-]{10,250}/g },
  { type: 'slack_webhook', pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,200}/g },
  { type: 'google_api_key', pattern: /AIza[0-9A-Za-z_-]{35}/g },
  { type: 'stripe_key', pattern: /(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,247}/g },
];

const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z ]{0,30}PRIVATE KEY(?: BLOCK)?-----/g;
const PRIVATE_KEY_END = /-----END [A-Z ]{0,30}PRIVATE KEY(?: BLOCK)?-----/g;

/** Words after which a long random-looking token is probably a credential. */
const CONTEXT_WORDS = /api[_-]?key|secret|token|passw(?:or)?d|pwd|credential|bearer|auth/gi;

export interface SecretScanOptions {
  /** Flag high-entropy tokens that follow words like key/secret/token (default true). */
  highEntropy?: boolean;
}

export function detectSecrets(text: string, options: SecretScanOptions = {}): Finding[] {
  const findings: Finding[] = [];
  for (const { type, pattern } of PREFIXED_SECRETS) {
    for (const match of text.matchAll(pattern)) {
      const start = match.index;
      if (isWordCharAt(text, start - 1) && type !== 'slack_webhook') continue;
      findings.push({ start, end: start + match[0].length, type });
    }
  }
  findings.push(...findPrivateKeys(text), ...findJwts(text));
  if (options.highEntropy !== false) findings.push(...findContextualTokens(text));
  return withoutOverlaps(findings);
}

function findPrivateKeys(text: string): Finding[] {
  const findings: Finding[] = [];
  // Fresh copies: a /g regex carries its position, and shared positions are shared state.
  const beginPattern = new RegExp(PRIVATE_KEY_BEGIN);
  const endPattern = new RegExp(PRIVATE_KEY_END);
  for (let begin = beginPattern.exec(text); begin; begin = beginPattern.exec(text)) {
    endPattern.lastIndex = begin.index + begin[0].length;
    const end = endPattern.exec(text);
    // Without an END line the rest of the text is the key: a truncated key is still a leaked key.
    const stop = end ? end.index + end[0].length : text.length;
    findings.push({ start: begin.index, end: stop, type: 'private_key' });
    if (!end) break;
    beginPattern.lastIndex = stop;
  }
  return findings;
}

function isBase64UrlChar(code: number): boolean {
  return isAlphanumeric(code) || code === 45 || code === 95;
}

/** JWTs: three base64url segments, the first two starting with `eyJ` (a JSON object's `{"`). */
function findJwts(text: string): Finding[] {
  const findings: Finding[] = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf('eyJ', from);
    if (start < 0) return findings;
    // Scan the whole token once (base64url characters and dots) and continue after it.
    let end = start;
    while (end < text.length && (isBase64UrlChar(text.charCodeAt(end)) || text.charCodeAt(end) === 46)) end++;
    const segments = text.slice(start, end).split('.');
    if (
      !isWordCharAt(text, start - 1) &&
      segments.length >= 3 &&
      segments[1].startsWith('eyJ') &&
      segments[0].length >= 10 &&
      segments[1].length >= 10 &&
      segments[2].length >= 8
    ) {
      const tokenEnd = start + segments.slice(0, 3).join('.').length;
      findings.push({ start, end: tokenEnd, type: 'jwt' });
    }
    from = Math.max(end, start + 3);
  }
}

function isTokenChar(code: number): boolean {
  return isAlphanumeric(code) || code === 43 || code === 47 || code === 61 || code === 95 || code === 45 || code === 46;
}

const MAX_GAP = 12;
const MAX_TOKEN = 512;

/** A token of 16+ characters with high Shannon entropy, within a few characters after a context word. */
function findContextualTokens(text: string): Finding[] {
  const findings: Finding[] = [];
  let floor = 0;
  const contextPattern = new RegExp(CONTEXT_WORDS);
  for (let context = contextPattern.exec(text); context; context = contextPattern.exec(text)) {
    let cursor = Math.max(context.index + context[0].length, floor);
    // Skip the rest of the word (e.g. "tokens") and separators like `: = " '`.
    let budget = MAX_GAP + 20;
    while (cursor < text.length && budget > 0 && isWordCharAt(text, cursor)) {
      cursor++;
      budget--;
    }
    let gap = 0;
    while (cursor < text.length && gap < MAX_GAP && !isTokenChar(text.charCodeAt(cursor))) {
      cursor++;
      gap++;
    }
    const start = cursor;
    while (cursor < text.length && cursor - start < MAX_TOKEN && isTokenChar(text.charCodeAt(cursor))) cursor++;
    const token = text.slice(start, cursor);
    if (token.length >= 16 && looksRandom(token)) {
      findings.push({ start, end: cursor, type: 'secret' });
      floor = cursor;
      contextPattern.lastIndex = cursor;
    }
  }
  return findings;
}

/** Mixed character classes and ≥3.5 bits of entropy per character: not a word, not a repeated pattern. */
export function looksRandom(token: string): boolean {
  let classes = 0;
  let hasDigit = false;
  let hasUpper = false;
  let hasLower = false;
  const counts = new Map<number, number>();
  for (let index = 0; index < token.length; index++) {
    const code = token.charCodeAt(index);
    if (isDigit(code)) hasDigit = true;
    else if (isUpper(code)) hasUpper = true;
    else if (isLower(code)) hasLower = true;
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  classes = Number(hasDigit) + Number(hasUpper) + Number(hasLower);
  if (classes < 2) return false;
  let entropy = 0;
  for (const count of counts.values()) {
    const probability = count / token.length;
    entropy -= probability * Math.log2(probability);
  }
  return entropy >= 3.5;
}
