import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runClientCli, type ClientCliIo } from '../src/cli.js';
import { startFakeGateway, type FakeGateway } from './fake-gateway.js';

let fake: FakeGateway;

before(async () => {
  fake = await startFakeGateway();
});

after(async () => {
  await fake.close();
});

function capture(env: Record<string, string | undefined>): ClientCliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    env,
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    out: () => out,
    err: () => err,
  };
}

const env = () => ({ GW_API_KEY: 'sk-gw-cli', GW_BASE_URL: fake.baseURL });

test('gw chat prints the answer and the cost', async () => {
  const io = capture(env());
  assert.equal(await runClientCli(['chat', 'say hi', '--model', 'gpt-test'], io), 0);
  assert.equal(io.out(), 'Hello from gw\n');
  assert.match(io.err(), /cost \$0\.000123456/);
  assert.equal(fake.seen.at(-1)?.authorization, 'Bearer sk-gw-cli');
});

test('gw chat --stream streams the answer and prints the cost from the usage chunk', async () => {
  const io = capture(env());
  assert.equal(await runClientCli(['chat', 'say hi', '--stream', '--model', 'gpt-test'], io), 0);
  assert.equal(io.out(), 'Hello\n');
  assert.match(io.err(), /cost \$0\.000000789/);
});

test('gw chat without --model uses the first model of the catalog', async () => {
  const io = capture(env());
  assert.equal(await runClientCli(['chat', 'hi'], io), 0);
  assert.equal((fake.seen.at(-1)?.body as { model?: string }).model, 'gpt-test');
});

test('gw models and gw credits', async () => {
  const models = capture(env());
  assert.equal(await runClientCli(['models'], models), 0);
  assert.equal(models.out(), 'gpt-test\n');
  const credits = capture(env());
  assert.equal(await runClientCli(['credits'], credits), 0);
  assert.equal(JSON.parse(credits.out()).echo.path, '/api/credits/balance');
});

test('gateway errors exit 1 with the code; a missing key or bad usage exits 2', async () => {
  const failing = capture(env());
  assert.equal(await runClientCli(['chat', 'hi', '--model', 'broke-model'], failing), 1);
  assert.match(failing.err(), /insufficient_credits/);
  assert.match(failing.err(), /request req_fake_/);
  const noKey = capture({ GW_BASE_URL: fake.baseURL });
  assert.equal(await runClientCli(['models'], noKey), 2);
  assert.match(noKey.err(), /GW_API_KEY/);
  const unknown = capture(env());
  assert.equal(await runClientCli(['dance'], unknown), 2);
  const noPrompt = capture(env());
  assert.equal(await runClientCli(['chat'], noPrompt), 2);
});
