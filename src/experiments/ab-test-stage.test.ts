import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GatewayCall, Outcome } from '../pipeline/stage.js';
import { fakeCall } from '../../test/features/fake-gateway-call.js';
import { createAbTestStage } from './ab-test-stage.js';
import type { ChatModelDirectory } from './check-variant-models.js';
import type { ExperimentStatsRecorder } from './experiment-stats-recorder.js';
import type { Experiment, Variant } from './experiment-types.js';

type RecordedOutcome = Parameters<ExperimentStatsRecorder['record']>[0];

const swap: Experiment = {
  id: 'exp-swap',
  orgId: 'org-test',
  name: 'swap',
  targetKind: 'model',
  target: 'model-a',
  variants: [
    { name: 'control', weight: 1 },
    { name: 'candidate', weight: 1, model: 'model-b', parameters: { temperature: 0.1 } as Variant['parameters'] },
  ],
  status: 'active',
  createdAt: 0,
  updatedAt: 0,
};

/** random() for assignVariant: 0 draws the first variant (control), 0.99 the last (candidate). */
const CONTROL = () => 0;
const CANDIDATE = () => 0.99;

function catalogOf(chatModels: string[], otherModels: string[] = []) {
  const lookups: string[] = [];
  const models: ChatModelDirectory = {
    has: (model) => (lookups.push(model), chatModels.includes(model) || otherModels.includes(model)),
    supports: (model) => chatModels.includes(model),
  };
  return { models, lookups };
}

function setup(options: { random: () => number; models?: ChatModelDirectory; experiments?: Experiment[] }) {
  const recorded: RecordedOutcome[] = [];
  const experiments = options.experiments ?? [swap];
  const stage = createAbTestStage({
    store: { listActive: async () => experiments, peekActive: () => experiments },
    stats: { record: (entry) => void recorded.push(entry) },
    models: options.models ?? catalogOf(['model-a', 'model-b']).models,
    random: options.random,
  });
  return { stage, recorded };
}

/** A chat call to model-a; `allowed` restricts the key, team or org to a list of models. */
function callTo(allowed: { key?: string[]; team?: string[]; org?: string[] } = {}): GatewayCall {
  const call = fakeCall({ request: { model: 'model-a', messages: [{ role: 'user', content: 'hi' }], temperature: 0.9 } });
  const { auth } = call;
  return {
    ...call,
    auth: {
      org: { ...auth.org, enabledModels: allowed.org ?? null },
      team: allowed.team ? { id: 'team-1', orgId: auth.org.id, name: 'team', allowedModels: allowed.team, budget: null, createdAt: 0 } : null,
      key: { ...auth.key, teamId: allowed.team ? 'team-1' : null, allowedModels: allowed.key ?? null },
    },
  };
}

async function run(stage: ReturnType<typeof setup>['stage'], call: GatewayCall): Promise<GatewayCall> {
  let forwarded: GatewayCall | undefined;
  await stage.run(call, async (next): Promise<Outcome> => {
    forwarded = next;
    return { kind: 'json', body: {} };
  });
  assert.ok(forwarded, 'the call went on');
  return forwarded;
}

function assertRanAsSent(forwarded: GatewayCall, call: GatewayCall, recorded: RecordedOutcome[]): void {
  assert.equal(forwarded, call, 'the call goes on unchanged');
  assert.equal(forwarded.model, 'model-a');
  assert.equal(call.record.headers['x-gw-ab-test'], undefined);
  assert.equal(call.record.abVariant, undefined);
  assert.deepEqual(recorded, []);
}

test('a caller allowed the variant model gets the variant: model, parameters, header and stats', async () => {
  const { stage, recorded } = setup({ random: CANDIDATE });
  const call = callTo({ key: ['model-a', 'model-b'], team: ['model-a', 'model-b'], org: ['model-a', 'model-b'] });
  const forwarded = await run(stage, call);
  assert.equal(forwarded.model, 'model-b');
  assert.equal(forwarded.request.model, 'model-b');
  assert.equal(forwarded.request.temperature, 0.1);
  assert.equal(call.record.headers['x-gw-ab-test'], 'swap:candidate');
  assert.deepEqual(recorded.map((entry) => [entry.experimentId, entry.variant, entry.error]), [['exp-swap', 'candidate', false]]);
});

test("a key whose allowed_models exclude the variant's model is left out of the experiment: runs as sent, no header, no stats", async () => {
  const { stage, recorded } = setup({ random: CANDIDATE });
  const call = callTo({ key: ['model-a'] });
  assertRanAsSent(await run(stage, call), call, recorded);
});

test("a key whose team's allowed_models exclude the variant's model is left out likewise", async () => {
  const { stage, recorded } = setup({ random: CANDIDATE });
  const call = callTo({ team: ['model-a'] });
  assertRanAsSent(await run(stage, call), call, recorded);
});

test('a variant model the org disabled after the experiment was written is not routed to', async () => {
  const { stage, recorded } = setup({ random: CANDIDATE });
  const call = callTo({ org: ['model-a'] });
  assertRanAsSent(await run(stage, call), call, recorded);
});

test('a variant model removed from the catalog, or that no longer serves chat, is not routed to', async () => {
  for (const catalog of [catalogOf(['model-a']), catalogOf(['model-a'], ['model-b'])]) {
    const { stage, recorded } = setup({ random: CANDIDATE, models: catalog.models });
    const call = callTo();
    assertRanAsSent(await run(stage, call), call, recorded);
    assert.deepEqual(catalog.lookups, ['model-b']);
  }
});

test("a restricted caller drawn into a variant that keeps the caller's model still takes part, without a catalog lookup", async () => {
  const catalog = catalogOf(['model-a', 'model-b']);
  const { stage, recorded } = setup({ random: CONTROL, models: catalog.models });
  const call = callTo({ key: ['model-a'] });
  const forwarded = await run(stage, call);
  assert.equal(forwarded.model, 'model-a');
  assert.equal(call.record.headers['x-gw-ab-test'], 'swap:control');
  assert.deepEqual(recorded.map((entry) => entry.variant), ['control']);
  assert.deepEqual(catalog.lookups, []);
});

test('an org without experiments goes straight on, without a catalog lookup', async () => {
  const catalog = catalogOf(['model-a', 'model-b']);
  const { stage, recorded } = setup({ random: CANDIDATE, models: catalog.models, experiments: [] });
  const call = callTo();
  assertRanAsSent(await run(stage, call), call, recorded);
  assert.deepEqual(catalog.lookups, []);
});
