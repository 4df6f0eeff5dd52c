/** Luhn checksum (ISO/IEC 7812-1) over a string of digits: payment card numbers. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index--) {
    let value = digits.charCodeAt(index) - 48;
    if (value < 0 || value > 9) return false;
    if (double) {
      value *= 2;
      if (value > 9) value -= 9;
    }
    sum += value;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * IBAN check (ISO 13616 / ISO 7064 mod 97-10): move the first four characters to the end, map
 * letters to 10..35 and the remainder mod 97 must be 1. Computed piecewise so no big integers are needed.
 */
export function ibanValid(compact: string): boolean {
  if (compact.length < 15 || compact.length > 34) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (let index = 0; index < rearranged.length; index++) {
    const code = rearranged.charCodeAt(index);
    if (code >= 48 && code <= 57) {
      remainder = (remainder * 10 + (code - 48)) % 97;
    } else if (code >= 65 && code <= 90) {
      remainder = (remainder * 100 + (code - 55)) % 97;
    } else {
      return false;
    }
  }
  return remainder === 1;
}
