import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ibanValid, luhnValid } from './check-digits.js';
import { detectPii } from './detect-pii.js';

const types = (text: string) => detectPii(text).map((finding) => [finding.type, text.slice(finding.start, finding.end)]);

test('finds emails, and not things that only look like them', () => {
  assert.deepEqual(types('write to jane.doe+gw@example.co.uk.'), [['email', 'jane.doe+gw@example.co.uk']]);
  assert.deepEqual(types('user@localhost and @handle and a@b.c'), []);
});

test('finds payment cards only with a valid Luhn digit', () => {
  assert.deepEqual(types('card 4111 1111 1111 1111 ok'), [['credit_card', '4111 1111 1111 1111']]);
  assert.deepEqual(types('card 4111-1111-1111-1112 ok'), []);
  assert.equal(luhnValid('79927398713'), true);
  assert.equal(luhnValid('79927398710'), false);
});

test('finds IBANs only with a valid mod-97 check', () => {
  assert.deepEqual(types('pay DE89 3704 0044 0532 0130 00 today'), [['iban', 'DE89 3704 0044 0532 0130 00']]);
  assert.deepEqual(types('pay GB82WEST12345698765432'), [['iban', 'GB82WEST12345698765432']]);
  assert.deepEqual(types('pay DE89 3704 0044 0532 0130 02 today'), []);
  assert.equal(ibanValid('GB82WEST12345698765433'), false);
});

test('finds US SSNs but not invalid areas', () => {
  assert.deepEqual(types('ssn 123-45-6789'), [['ssn', '123-45-6789']]);
  assert.deepEqual(types('ssn 666-45-6789 and 000-12-3456'), []);
});

test('finds IPv4 and IPv6 addresses', () => {
  assert.deepEqual(types('from 192.168.10.254, then 2001:db8::8a2e:370:7334.'), [
    ['ip_address', '192.168.10.254'],
    ['ip_address', '2001:db8::8a2e:370:7334'],
  ]);
  assert.deepEqual(types('version 999.1.2.3 at 10:30:45'), []);
});

test('finds phone numbers in common formats, not dates or ids', () => {
  assert.deepEqual(types('call +44 20 7946 0958 or (555) 123-4567'), [
    ['phone', '+44 20 7946 0958'],
    ['phone', '(555) 123-4567'],
  ]);
  assert.deepEqual(types('on 2024-01-15 10:30 id 1700000000123'), []);
});

test('finds a number written right before or after another number', () => {
  assert.deepEqual(types('card 4111 1111 1111 1111 123'), [['credit_card', '4111 1111 1111 1111']]);
  assert.deepEqual(types('pay 4111111111111111 12 26'), [['credit_card', '4111111111111111']]);
  assert.deepEqual(types('ssn 123-45-6789 1990'), [['ssn', '123-45-6789']]);
  assert.deepEqual(types('ip 10.0.0.1 10.0.0.2'), [
    ['ip_address', '10.0.0.1'],
    ['ip_address', '10.0.0.2'],
  ]);
  assert.deepEqual(types('call 555-123-4567 2 times'), [['phone', '555-123-4567']]);
  assert.deepEqual(types('call 1 (555) 123-4567. 2nd try'), [['phone', '1 (555) 123-4567']]);
  assert.deepEqual(types('call 555-123-4567 2nd time'), [['phone', '555-123-4567']]);
});

test('plain numbers side by side stay undetected', () => {
  assert.deepEqual(types('order 12345 67890'), []);
  assert.deepEqual(types('ids 1234 5678 9012 3456 78'), []);
  assert.deepEqual(types('version 1.2.3.4.5 and 300.1.1.1 2'), []);
  assert.deepEqual(types('totals 100 200 300 400 500 600 700'), []);
  assert.deepEqual(types('on 2024-01-15 10:30 2024-01-16'), []);
});

test('respects the configured types', () => {
  assert.deepEqual(detectPii('a@example.com 123-45-6789', ['ssn']).map((finding) => finding.type), ['ssn']);
});

test('hostile input of about 1 MB is scanned correctly (linear scanners)', () => {
  const size = 1 << 20;
  assert.equal(detectPii('a@'.repeat(size / 2)).length, 0);
  assert.equal(detectPii('1 '.repeat(size / 2)).length, 0);
  assert.equal(detectPii('12 '.repeat(size / 3)).length, 0);
  assert.equal(detectPii('DE89 '.repeat(size / 5)).length, 0);
  assert.equal(detectPii(':a'.repeat(size / 2)).length, 0);
  const mixed = `${'x.'.repeat(size / 4)}bob@example.com ${'9-'.repeat(size / 4)}`;
  assert.deepEqual(detectPii(mixed).map((finding) => finding.type), ['email']);
});
