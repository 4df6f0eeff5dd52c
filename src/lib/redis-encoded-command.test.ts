import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { Command } from 'ioredis';
import { encodeCommand } from './redis-encoded-command.js';

/** What ioredis itself writes for the same command (its string-building encoder). */
function ioredisWireForm(name: string, args: Array<string | number>): Buffer {
  const written = new Command(name, args).toWritable(undefined as never);
  return Buffer.isBuffer(written) ? written : Buffer.from(written);
}

test('encodeCommand: byte for byte what ioredis writes, for ASCII, multi-byte, empty and numeric arguments', () => {
  const cases: Array<[string, Array<string | number>]> = [
    ['get', ['gw:changes:version']],
    ['evalsha', ['0123456789abcdef0123456789abcdef01234567', 2, 'gw:rl:key_1:rpm:29512345', 'gw:rl:key_1:rpm:29512344', '1770000000000', '', '60000', 0.25]],
    ['set', ['gw:cache:é✓🙂', 'value with\r\nline breaks and ünïcödé', 'PX', 1500]],
    ['ping', []],
    // Lengths crossing a digit boundary (9 → 10 bytes, 99 → 100) and a count of ten parts.
    ['rpush', ['k', 'x'.repeat(9), 'x'.repeat(10), 'x'.repeat(99), 'x'.repeat(100), 'y', 'z', -12, 1e21]],
  ];
  for (const [name, args] of cases) {
    assert.deepEqual(encodeCommand(name, args), ioredisWireForm(name, args), `${name} ${JSON.stringify(args)}`);
  }
});

test('encodeCommand: argument groups are sent one after another, as one flat argument list', () => {
  const grouped = encodeCommand('evalsha', ['sha', '2'], ['key:a', 'key:b'], ['1', '', '3']);
  assert.deepEqual(grouped, encodeCommand('evalsha', ['sha', '2', 'key:a', 'key:b', '1', '', '3']));
  assert.equal(grouped.toString('latin1'), '*8\r\n$7\r\nevalsha\r\n$3\r\nsha\r\n$1\r\n2\r\n$5\r\nkey:a\r\n$5\r\nkey:b\r\n$1\r\n1\r\n$0\r\n\r\n$1\r\n3\r\n');
});

test('an embedded gateway does not load ioredis: importing the Redis script batch (and this encoder) loads no ioredis file', () => {
  // In a fresh process, since this file itself imports ioredis.
  const script = [
    "await import('./src/lib/redis-script-batch.ts');",
    "const { createRequire } = await import('node:module');",
    "console.log(Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes('/node_modules/ioredis/')).length);",
  ].join('\n');
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8' });
  assert.equal(output.trim(), '0');
});
