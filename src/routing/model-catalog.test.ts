import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createDatabase, type DatabaseHandle } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createSecretBox } from '../lib/secret-box.js';
import { parseCatalogFile } from './catalog-file.js';
import { createModelCatalog } from './model-catalog.js';

let handle: DatabaseHandle;
const box = createSecretBox(randomBytes(32));

before(async () => {
  handle = await createDatabase('sqlite::memory:');
  await migrateToLatest(handle.db);
});
after(() => handle.close());

const FILE = `
models:
  - id: gpt-x
    owned_by: openai
    strategy: weighted
    fallbacks: [{ model: local-chat, on: [rate_limited, any] }]
    pricing: { inputPerMillion: "1", outputPerMillion: "2" }
    deployments:
      - provider: openai
        upstream_model: gpt-x-2025
        base_url: https://api.example.test/v1
        api_key_env: EXAMPLE_KEY
        weight: 3
        timeouts: { first_byte_ms: 5000 }
      - id: gpt-x-backup
        provider: openai
        upstream_model: gpt-x-2025
        api_key: sk-inline
        priority: 1
`;

test('file models parse with defaults, environment keys resolved', () => {
  const file = parseCatalogFile(FILE, { EXAMPLE_KEY: 'sk-from-env' });
  const deployment = file.models[0]!.deployments[0]!;
  assert.equal(deployment.api_key, 'sk-from-env');
  assert.equal(deployment.priority, 0);
  assert.deepEqual(deployment.settings, {});
});

test('a bad file names the field path', () => {
  assert.throws(() => parseCatalogFile('models:\n  - id: m\n    deployments:\n      - provider: x\n        upstream_model: y\n        weight: many\n', {}), /models\.0\.deployments\.0\.weight/);
  assert.throws(() => parseCatalogFile(FILE, {}), /models\.0\.deployments\.0\.api_key_env: environment variable EXAMPLE_KEY is not set/);
  assert.throws(() => parseCatalogFile('models:\n  - id: m\n    stratgy: weighted\n', {}), /models\.0.*stratgy/);
  assert.throws(() => parseCatalogFile('models: [', {}), /not valid YAML/);
});

test('merges built-ins, file and database; decrypts credentials; reload sees admin changes', async () => {
  const catalog = await createModelCatalog({
    db: handle.db,
    fileConfig: parseCatalogFile(FILE, { EXAMPLE_KEY: 'sk-from-env' }),
    builtinModels: [{ id: 'local-chat', ownedBy: 'local', description: 'offline', price: { inputPerMillion: '0.1' } }],
    credentialVault: box,
    now: () => 1234,
  });
  assert.deepEqual(catalog.list().map((model) => model.id), ['gpt-x', 'local-chat']);
  const model = catalog.get('gpt-x')!;
  assert.equal(model.strategy, 'weighted');
  assert.equal(model.deployments.length, 2);
  assert.deepEqual(model.fallbacks, [{ model: 'local-chat', on: ['rate_limited', 'any'] }]);
  const first = catalog.target(model.deployments[0]!.id)!;
  assert.equal(first.apiKey, 'sk-from-env');
  assert.equal(first.baseUrl, 'https://api.example.test/v1');
  assert.deepEqual(first.timeouts, { connectMs: 10_000, firstByteMs: 5000, totalMs: 600_000 });
  assert.equal(catalog.target('gpt-x-backup')!.apiKey, 'sk-inline');
  assert.equal(catalog.target('builtin:local-chat')!.provider, 'local');

  await handle.db.insertInto('provider_credentials').values({
    id: 'cred-1', name: 'azure-main', provider: 'azure',
    secret_ciphertext: box.seal(JSON.stringify({ apiKey: 'sk-db', apiVersion: '2024-10-21' })), created_at: 1,
  }).execute();
  await handle.db.insertInto('deployments').values({
    id: 'dep-db', model_id: 'local-chat', provider: 'azure', upstream_model: 'gpt-4o', credential_id: 'cred-1',
    base_url: null, weight: 1, priority: 0, timeouts: JSON.stringify({ totalMs: 1000 }), rpm: null, tpm: null,
    pricing: null, settings: JSON.stringify({ region: 'eu' }), enabled: 1, created_at: 2,
  }).execute();
  await handle.db.insertInto('models').values({
    id: 'gpt-x', owned_by: 'admin', strategy: 'least-latency', fallbacks: '[]', description: 'from db', created_at: 3,
  }).execute();
  assert.equal(catalog.target('dep-db'), undefined);
  await catalog.reload();

  const local = catalog.get('local-chat')!;
  assert.deepEqual(local.deployments.map((item) => item.id), ['dep-db'], 'an explicit deployment replaces the built-in one');
  const target = catalog.target('dep-db')!;
  assert.equal(target.apiKey, 'sk-db');
  assert.deepEqual(target.settings, { apiVersion: '2024-10-21', region: 'eu' });
  assert.equal(target.timeouts.totalMs, 1000);
  const overridden = catalog.get('gpt-x')!;
  assert.equal(overridden.strategy, 'least-latency');
  assert.equal(overridden.ownedBy, 'admin');
  assert.equal(overridden.deployments.length, 2, 'database model row keeps the file deployments');
  assert.deepEqual(overridden.pricing, { inputPerMillion: '1', outputPerMillion: '2' });
});
