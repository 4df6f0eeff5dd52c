import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES } from '../../src/errors/error-codes.js';

test('docs/errors.md lists every error code with its status', () => {
  const documentation = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, entry] of Object.entries(ERROR_CODES)) {
    const row = documentation.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    assert.ok(row, `docs/errors.md has no row for ${code}`);
    assert.ok(row.includes(`| ${entry.httpStatus} |`), `docs/errors.md gives the wrong status for ${code}`);
    assert.ok(row.includes(`| ${entry.type} |`), `docs/errors.md gives the wrong type for ${code}`);
  }
});
