import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from './load-config.js';

test('GW_SQLITE_WRITER: auto by default, thread or inline when set, and a bad value names the variable', () => {
  assert.equal(loadConfig({}).sqliteWriter, 'auto');
  assert.equal(loadConfig({ GW_SQLITE_WRITER: 'inline' }).sqliteWriter, 'inline');
  assert.equal(loadConfig({ GW_SQLITE_WRITER: 'thread' }).sqliteWriter, 'thread');
  assert.throws(() => loadConfig({ GW_SQLITE_WRITER: 'sometimes' }), /GW_SQLITE_WRITER/);
});
