import { isIPv6 } from 'node:net';
import { ibanValid, luhnValid } from './check-digits.js';
import type { Finding, PiiType } from './guardrail-types.js';
import { PII_TYPES } from './guardrail-types.js';
import { isAlphanumeric, isDigit, isHexDigit, isUpper, isWordCharAt } from './scan-chars.js';

/**
 * Personal-data detector. Every scanner is hand-written and visits each character a bounded number
 * of times, so hostile input (megabytes of `a@a@…` or digit soup) costs linear time; there is no
 * regex backtracking to exploit. Findings never overlap: card numbers win over phone numbers, etc.
 */
export function detectPii(text: string, types: readonly PiiType[] = PII_TYPES): Finding[] {
  const wanted = new Set(types);
  const findings: Finding[] = [];
  if (wanted.has('email')) findings.push(...findEmails(text));
  if (wanted.has('iban')) findings.push(...findIbans(text));
  findings.push(...findNumberRuns(text, wanted));
  if (wanted.has('ip_address')) findings.push(...findIpv6(text));
  return withoutOverlaps(findings);
}

function isLocalPartChar(code: number): boolean {
  // RFC 5322 atext, restricted to what real addresses use: letters, digits and . _ % + -
  return isAlphanumeric(code) || code === 46 || code === 95 || code === 37 || code === 43 || code === 45;
}

function isDomainChar(code: number): boolean {
  return isAlphanumeric(code) || code === 46 || code === 45;
}

function findEmails(text: string): Finding[] {
  const findings: Finding[] = [];
  let from = 0;
  let floor = 0;
  for (;;) {
    const at = text.indexOf('@', from);
    if (at < 0) return findings;
    // '@' is neither a local-part nor a domain character, so each side scan stops at the neighbouring '@'.
    let start = at;
    while (start > floor && isLocalPartChar(text.charCodeAt(start - 1))) start--;
    while (start < at && text.charCodeAt(start) === 46) start++;
    let end = at + 1;
    while (end < text.length && isDomainChar(text.charCodeAt(end))) end++;
    while (end > at + 1 && (text.charCodeAt(end - 1) === 46 || text.charCodeAt(end - 1) === 45)) end--;
    // Search back only within this domain: an unbounded lastIndexOf would rescan the text per '@'.
    let lastDot = end - 1;
    while (lastDot > at && text.charCodeAt(lastDot) !== 46) lastDot--;
    const tld = lastDot > at + 1 ? text.slice(lastDot + 1, end) : '';
    if (start < at && tld.length >= 2 && /^[A-Za-z]+$/.test(tld)) {
      findings.push({ start, end, type: 'email' });
      floor = end;
      from = end;
    } else {
      from = at + 1;
    }
  }
}

function findIbans(text: string): Finding[] {
  const findings: Finding[] = [];
  for (let index = 0; index + 4 <= text.length; index++) {
    if (
      !isUpper(text.charCodeAt(index)) ||
      !isUpper(text.charCodeAt(index + 1)) ||
      !isDigit(text.charCodeAt(index + 2)) ||
      !isDigit(text.charCodeAt(index + 3)) ||
      isWordCharAt(text, index - 1)
    ) {
      continue;
    }
    // Collect up to 34 characters, allowing single spaces between groups; every group boundary is a candidate end.
    let compact = '';
    let cursor = index;
    const candidates: Array<{ compact: string; end: number }> = [];
    while (cursor < text.length && compact.length < 34) {
      const code = text.charCodeAt(cursor);
      if (isUpper(code) || isDigit(code)) {
        compact += text[cursor];
        cursor++;
      } else if (code === 32 && cursor + 1 < text.length && isAlphanumeric(text.charCodeAt(cursor + 1))) {
        candidates.push({ compact, end: cursor });
        cursor++;
      } else {
        break;
      }
    }
    if (!isWordCharAt(text, cursor)) candidates.push({ compact, end: cursor });
    for (let candidate = candidates.length - 1; candidate >= 0; candidate--) {
      const { compact: value, end } = candidates[candidate];
      if (ibanValid(value) && !isWordCharAt(text, end)) {
        findings.push({ start: index, end, type: 'iban' });
        index = end - 1;
        break;
      }
    }
  }
  return findings;
}

const NUMBER_SEPARATORS = new Set([32, 45, 46, 40, 41]); // space - . ( )

/**
 * Scans maximal runs of digits and separators once, then classifies each run as a card number
 * (Luhn), a US SSN, an IPv4 address or a phone number. A run that does not classify whole is tried
 * in space-separated windows (see classifyWindows), so a number written next to another one, such
 * as a card followed by its CVC, is still found.
 */
function findNumberRuns(text: string, wanted: ReadonlySet<PiiType>): Finding[] {
  const findings: Finding[] = [];
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    const opensRun = isDigit(code) || ((code === 43 || code === 40) && isDigit(text.charCodeAt(index + 1)));
    if (!opensRun || isWordCharAt(text, index - 1)) {
      index++;
      continue;
    }
    let end = index + 1;
    let separatorsInRow = 0;
    while (end < text.length) {
      const next = text.charCodeAt(end);
      if (isDigit(next)) separatorsInRow = 0;
      else if (NUMBER_SEPARATORS.has(next) && separatorsInRow < 2) separatorsInRow++;
      else break;
      end++;
    }
    while (end > index && !isDigit(text.charCodeAt(end - 1))) end--;
    const gluedToWord = isWordCharAt(text, end);
    // Nothing classifiable is longer than 19 digits with a separator or two between each (a long run is
    // digit soup, left to the windows), so such a run is not sliced and split whole.
    const classifiable = !gluedToWord && end - index <= MAX_PII_DIGITS * 3;
    const type = classifiable ? classifyNumberRun(text.slice(index, end), wanted) : undefined;
    if (type) findings.push({ start: index, end, type });
    else findings.push(...classifyWindows(text, index, end, gluedToWord, wanted));
    index = Math.max(end, index + 1);
  }
  return findings;
}

/** Longest number any classifier accepts (a 19-digit card), and the most space-separated tokens it is written in. */
const MAX_PII_DIGITS = 19;
const MAX_WINDOW_TOKENS = 6;

/**
 * Splits a run that did not classify whole at its spaces and classifies windows of consecutive
 * tokens, longest first from each start, keeping windows that do not overlap. Only spaces split:
 * splitting inside a dotted or dashed token would read `1.2.3.4.5` as an address or a long id as an
 * SSN. A window classifies exactly as the same text standing alone would, so this finds no shape the
 * whole-run check would not. A window holds at most MAX_PII_DIGITS digits and MAX_WINDOW_TOKENS
 * tokens, so each token is visited a bounded number of times and digit soup stays linear.
 */
function classifyWindows(text: string, start: number, end: number, gluedToWord: boolean, wanted: ReadonlySet<PiiType>): Finding[] {
  const tokens = spaceSeparatedTokens(text, start, end);
  // A last token glued to a following word (`2nd`) is not a whole number; the tokens before it still are.
  if (gluedToWord) tokens.pop();
  const findings: Finding[] = [];
  let first = 0;
  while (first < tokens.length) {
    const found = longestWindowFrom(text, tokens, first, wanted);
    if (found) {
      findings.push(found.finding);
      first = found.next;
    } else {
      first++;
    }
  }
  return findings;
}

interface NumberToken {
  start: number;
  end: number;
  digits: number;
}

function spaceSeparatedTokens(text: string, start: number, end: number): NumberToken[] {
  const tokens: NumberToken[] = [];
  let index = start;
  while (index < end) {
    while (index < end && text.charCodeAt(index) === 32) index++;
    const tokenStart = index;
    let digits = 0;
    while (index < end && text.charCodeAt(index) !== 32) {
      if (isDigit(text.charCodeAt(index))) digits++;
      index++;
    }
    if (digits > 0) tokens.push({ start: tokenStart, end: index, digits });
  }
  return tokens;
}

function longestWindowFrom(
  text: string,
  tokens: readonly NumberToken[],
  first: number,
  wanted: ReadonlySet<PiiType>,
): { finding: Finding; next: number } | undefined {
  let last = first;
  let digits = tokens[first].digits;
  while (last + 1 < tokens.length && last + 1 - first < MAX_WINDOW_TOKENS && digits + tokens[last + 1].digits <= MAX_PII_DIGITS) {
    last++;
    digits += tokens[last].digits;
  }
  for (; last >= first; digits -= tokens[last].digits, last--) {
    const start = tokens[first].start;
    let end = tokens[last].end;
    // The run never ends on a separator, but a window may (`(555) 123-4567. 2` ends its window at `.`).
    while (!isDigit(text.charCodeAt(end - 1))) end--;
    if (!windowMayClassify(text, start, end, digits, last === first)) continue;
    const type = classifyNumberRun(text.slice(start, end), wanted);
    if (type) return { finding: { start, end, type }, next: last + 1 };
  }
  return undefined;
}

/**
 * Cheap shape filter run before a window is sliced and classified, so digit soup (`12 12 12 …`)
 * never reaches the classifier. Mirrors classifyNumberRun: a window spanning spaces can only be an
 * international phone (`+`, 8+ digits), a card (13+ digits opening with a group of four) or a
 * national phone (10-11 digits ending in a group of four); one token needs at least an address's 4 digits.
 */
function windowMayClassify(text: string, start: number, end: number, digits: number, singleToken: boolean): boolean {
  if (singleToken) return digits >= 4;
  if (text.charCodeAt(start) === 43) return digits >= 8;
  if (digits >= 13) return digitsInRow(text, start, 1) === 4;
  return digits >= 10 && digitsInRow(text, end - 1, -1) === 4;
}

/** How many digits in a row from `index` in direction `step`, counting at most five. */
function digitsInRow(text: string, index: number, step: 1 | -1): number {
  let count = 0;
  while (count < 5 && isDigit(text.charCodeAt(index + count * step))) count++;
  return count;
}

function classifyNumberRun(run: string, wanted: ReadonlySet<PiiType>): PiiType | undefined {
  const digits = run.replace(/\D/g, '');
  const groups = run.split(/[^0-9]+/).filter((group) => group.length > 0);
  // Printed card numbers open with a group of four (4-4-4-4, 4-6-5); without that, one in ten runs of
  // unrelated numbers (`200 300 400 …`) would pass Luhn by chance.
  const cardGrouping = groups.length === 1 || groups[0].length === 4;
  if (wanted.has('credit_card') && digits.length >= 13 && digits.length <= 19 && cardGrouping && /^[0-9 -]+$/.test(run) && luhnValid(digits)) {
    return 'credit_card';
  }
  if (wanted.has('ssn') && /^\d{3}-\d{2}-\d{4}$/.test(run)) {
    const [area, group, serial] = groups;
    if (area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000') return 'ssn';
  }
  if (wanted.has('ip_address') && /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(run) && groups.every((octet) => Number(octet) <= 255)) {
    return 'ip_address';
  }
  if (wanted.has('phone')) {
    if (run.startsWith('+') && digits.length >= 8 && digits.length <= 15) return 'phone';
    // National formats need grouping, so ids, timestamps and dates (first group of 4) are not taken for phones.
    const last = groups[groups.length - 1] ?? '';
    if (
      groups.length >= 3 &&
      digits.length >= 10 &&
      digits.length <= 11 &&
      groups[0].length <= 3 &&
      last.length === 4 &&
      groups.every((group) => group.length <= 4)
    ) {
      return 'phone';
    }
  }
  return undefined;
}

function isIpv6Char(code: number): boolean {
  return isHexDigit(code) || code === 58 || code === 46;
}

function findIpv6(text: string): Finding[] {
  const findings: Finding[] = [];
  let index = 0;
  while (index < text.length) {
    if (!isIpv6Char(text.charCodeAt(index))) {
      index++;
      continue;
    }
    let end = index + 1;
    let colons = text.charCodeAt(index) === 58 ? 1 : 0;
    while (end < text.length && isIpv6Char(text.charCodeAt(end))) {
      if (text.charCodeAt(end) === 58) colons++;
      end++;
    }
    let trimmed = end;
    while (trimmed > index && text.charCodeAt(trimmed - 1) === 46) trimmed--;
    const length = trimmed - index;
    if (colons >= 2 && length <= 45 && !isWordCharAt(text, index - 1) && !isWordCharAt(text, end)) {
      const candidate = text.slice(index, trimmed);
      if (/[0-9a-fA-F]/.test(candidate) && isIPv6(candidate)) findings.push({ start: index, end: trimmed, type: 'ip_address' });
    }
    index = end;
  }
  return findings;
}

/** Keeps the earliest, then longest, finding where spans overlap. */
export function withoutOverlaps(findings: Finding[]): Finding[] {
  const sorted = [...findings].sort((left, right) => left.start - right.start || right.end - left.end);
  const kept: Finding[] = [];
  let reach = -1;
  for (const finding of sorted) {
    if (finding.start >= reach) {
      kept.push(finding);
      reach = finding.end;
    }
  }
  return kept;
}
