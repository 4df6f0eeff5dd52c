/** Character classes for the hand-written scanners (char codes, no regex, so each test is O(1)). */
export function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export function isUpper(code: number): boolean {
  return code >= 65 && code <= 90;
}

export function isLower(code: number): boolean {
  return code >= 97 && code <= 122;
}

export function isAlphanumeric(code: number): boolean {
  return isDigit(code) || isUpper(code) || isLower(code);
}

export function isHexDigit(code: number): boolean {
  return isDigit(code) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/** True when the character at `index` (if any) continues a word, so a match there would not be whole. */
export function isWordCharAt(text: string, index: number): boolean {
  if (index < 0 || index >= text.length) return false;
  const code = text.charCodeAt(index);
  return isAlphanumeric(code) || code === 95;
}
