import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

// bin/gw-server chooses Node's runtime flags by how many CPUs the process may use. Stand-ins for
// `nproc` and `node` on PATH let the test see what it would start, without starting it.
const launcher = fileURLToPath(new URL('../../bin/gw-server', import.meta.url));
const stubs = mkdtempSync(join(tmpdir(), 'gw-launcher-'));
after(() => rmSync(stubs, { recursive: true, force: true }));

function launch(cpus: number, environment: Record<string, string> = {}): { args: string[]; arenas: string } {
  const bin = mkdtempSync(join(stubs, 'bin-'));
  writeFileSync(join(bin, 'nproc'), `#!/bin/sh\necho ${cpus}\n`);
  writeFileSync(join(bin, 'node'), '#!/bin/sh\necho "MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX"\nfor argument in "$@"; do echo "$argument"; done\n');
  chmodSync(join(bin, 'nproc'), 0o755);
  chmodSync(join(bin, 'node'), 0o755);
  const { MALLOC_ARENA_MAX: _inherited, GW_NODE_FLAGS: _flags, GW_SERVER_ENTRY: _entry, ...inherited } = process.env;
  const output = execFileSync('sh', [launcher], { env: { ...inherited, PATH: `${bin}:${process.env.PATH}`, ...environment }, encoding: 'utf8' });
  const [arenaLine, ...args] = output.trim().split('\n');
  return { args, arenas: arenaLine!.slice('MALLOC_ARENA_MAX='.length) };
}

test('one CPU: single-threaded collection, the optimising compiler on its own thread, one malloc arena', () => {
  const { args, arenas } = launch(1);
  assert.ok(args.includes('--single-threaded-gc'));
  assert.ok(!args.includes('--single-threaded'), 'the whole --single-threaded would put the optimising compiler on the event loop');
  assert.ok(args.includes('--max-semi-space-size=8') && args.includes('--heap-growing-percent=50'));
  assert.equal(arenas, '1');
  assert.match(args.at(-1)!, /\/dist\/server\/main\.js$/, 'the server bundle');
});

test('more CPUs: V8 keeps its helper threads, two malloc arenas', () => {
  const { args, arenas } = launch(2);
  assert.ok(!args.some((argument) => argument.startsWith('--single-threaded')));
  assert.equal(arenas, '2');
});

test('MALLOC_ARENA_MAX and GW_NODE_FLAGS from the environment win', () => {
  const { args, arenas } = launch(1, { MALLOC_ARENA_MAX: '4', GW_NODE_FLAGS: '--single-threaded --cpu-prof' });
  assert.equal(arenas, '4');
  // Given after the launcher's own flags, so Node applies them last.
  assert.ok(args.indexOf('--single-threaded') > args.indexOf('--single-threaded-gc'));
  assert.ok(args.includes('--cpu-prof'));
});

test('GW_SERVER_ENTRY runs another build: a relative path from the package root, an absolute one as given', () => {
  assert.match(launch(2, { GW_SERVER_ENTRY: 'dist/src/main.js' }).args.at(-1)!, /\/bin\/\.\.\/dist\/src\/main\.js$/);
  assert.equal(launch(2, { GW_SERVER_ENTRY: '/opt/gw/main.js' }).args.at(-1), '/opt/gw/main.js');
});
