import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { spawnGateway, type GatewayProcess } from '../helpers/spawn-gateway.js';

// What `npm start` runs is the server bundle (scripts/bundle-server.mjs, bin/gw-server), not the
// sources the other tests load: this file bundles the sources afresh and runs the bundle as a
// process, through the paths a bundle can break (worker threads started from files beside the
// bundle, packages loaded from node_modules, lazily loaded chunks, the error bodies).

interface BundleResult {
  outdir: string;
  external: string[];
  bundledFiles: number;
}
const bundler = pathToFileURL(join(import.meta.dirname, '../../scripts/bundle-server.mjs')).href;
const { bundleServer } = (await import(bundler)) as { bundleServer(options: { outdir: string }): Promise<BundleResult> };

// Inside the package, as dist/server/ is: the bundle finds the packages it leaves out in node_modules.
const cacheDirectory = join(import.meta.dirname, '../../node_modules/.cache');
mkdirSync(cacheDirectory, { recursive: true });
const scratch = mkdtempSync(join(cacheDirectory, 'gw-server-bundle-'));
let bundle: BundleResult;
const running: GatewayProcess[] = [];

before(async () => {
  bundle = await bundleServer({ outdir: join(scratch, 'server') });
});
after(async () => {
  await Promise.all(running.map((gateway) => gateway.stop()));
  rmSync(scratch, { recursive: true, force: true });
});

async function startBundle(name: string, environment: Record<string, string>): Promise<{ gateway: GatewayProcess; key: string; databasePath: string }> {
  const databasePath = join(scratch, `${name}.db`);
  const gateway = await spawnGateway({ GW_DATABASE_URL: `sqlite:${databasePath}`, GW_REDIS_URL: '', ...environment }, 30_000, join(bundle.outdir, 'main.js'));
  running.push(gateway);
  const key = /first virtual key:\s+(sk-gw-[A-Za-z0-9_-]+)/.exec(gateway.output())?.[1];
  assert.ok(key, `the first start prints a key: ${gateway.output()}`);
  return { gateway, key, databasePath };
}

async function post(url: string, key: string, body: string): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, unknown> };
}

test('the bundle holds the server and both SQLite worker threads, and leaves out the packages that read files beside their own', () => {
  const files = readdirSync(bundle.outdir);
  for (const name of ['main.js', 'sqlite-checkpoint-worker.js', 'sqlite-bulk-insert-worker.js']) assert.ok(files.includes(name), `${name} in ${files.join(', ')}`);
  assert.ok(bundle.external.includes('better-sqlite3'));
  // ioredis refers to its own directory (its package.json, its stack-trace filter): loaded whole.
  assert.ok(bundle.external.includes('ioredis'), bundle.external.join(', '));
  assert.ok(bundle.bundledFiles > 100);
});

for (const writer of ['thread', 'inline'] as const) {
  test(`the bundled server answers, refuses bad bodies with the error shape, and writes its request log (SQLite writer: ${writer})`, async () => {
    const { gateway, key, databasePath } = await startBundle(writer, { GW_SQLITE_WRITER: writer });

    const answered = await post(gateway.url, key, JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hello' }] }));
    assert.equal(answered.status, 200, JSON.stringify(answered.json));
    assert.equal((answered.json.choices as unknown[]).length, 1);
    assert.ok(answered.headers.get('x-gw-request-id'));

    const invalid = await post(gateway.url, key, '{"model":');
    assert.equal(invalid.status, 400);
    assert.deepEqual(invalid.json, { error: { message: 'The request body is not valid JSON.', type: 'invalid_request_error', code: 'invalid_request', param: null } });

    // Schema validation (zod) inside the bundle.
    const missing = await post(gateway.url, key, JSON.stringify({ model: 'local-chat' }));
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.json, { error: { message: "Missing required parameter: 'messages'.", type: 'invalid_request_error', code: 'invalid_request', param: 'messages' } });

    // A multipart upload: the parser is a CommonJS package imported on first use, whose named
    // export a split-off chunk lost (the bundle once answered "no boundary" here).
    const form = new FormData();
    form.append('model', 'local-chat');
    form.append('file', new Blob([Buffer.from('RIFF')], { type: 'audio/wav' }), 'a.wav');
    const upload = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    assert.deepEqual(await upload.json(), {
      error: { message: "The model 'local-chat' does not support this endpoint.", type: 'invalid_request_error', code: 'unsupported_model', param: 'model' },
    });

    // A graceful stop flushes the request log through the writer (a worker thread with
    // `thread`) and, with `inline`, has the checkpoint thread copy the log into the file.
    assert.equal(await gateway.stop('SIGTERM'), 0, gateway.output());
    assert.doesNotMatch(gateway.output(), /thread stopped|checkpoint thread|Cannot find module|ERR_/, gateway.output());
    const database = new SQLite(databasePath, { readonly: true });
    try {
      const logged = database.prepare('select status, count(*) as calls from request_log group by status order by status').all() as Array<{ status: number; calls: number }>;
      assert.deepEqual(logged, [
        { status: 200, calls: 1 },
        { status: 400, calls: 2 },
      ]);
    } finally {
      database.close();
    }
  });
}
