import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from './load-config.js';

test('GW_SQLITE_WRITER: auto by default, thread or inline when set, and a bad value names the variable', () => {
  assert.equal(loadConfig({}).sqliteWriter, 'auto');
  assert.equal(loadConfig({ GW_SQLITE_WRITER: 'inline' }).sqliteWriter, 'inline');
  assert.equal(loadConfig({ GW_SQLITE_WRITER: 'thread' }).sqliteWriter, 'thread');
  assert.throws(() => loadConfig({ GW_SQLITE_WRITER: 'sometimes' }), /GW_SQLITE_WRITER/);
});

test('GW_SQLITE_CACHE_KIB: 2 MiB by default, a number when set, and below 256 KiB names the variable', () => {
  assert.equal(loadConfig({}).sqliteCacheKib, 2048);
  assert.equal(loadConfig({ GW_SQLITE_CACHE_KIB: '8192' }).sqliteCacheKib, 8192);
  assert.throws(() => loadConfig({ GW_SQLITE_CACHE_KIB: '16' }), /GW_SQLITE_CACHE_KIB/);
});
