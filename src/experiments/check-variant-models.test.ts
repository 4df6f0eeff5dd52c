import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { checkTargetModel, checkVariantModels, type ChatModelDirectory } from './check-variant-models.js';

const catalog: ChatModelDirectory = {
  has: (model) => ['local-chat', 'local-chat-mini', 'local-embed'].includes(model),
  supports: (model) => model !== 'local-embed',
};

function paramOf(run: () => void): string | undefined {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, 'invalid_request');
    return error.param;
  }
  return undefined;
}

test('a variant naming a model the gateway does not serve is rejected, naming variants[i].model', () => {
  const variants = [
    { name: 'a', weight: 1, model: 'local-chat' },
    { name: 'b', weight: 1, model: 'nonexistent-model' },
  ];
  assert.equal(paramOf(() => checkVariantModels(variants, catalog, null)), 'variants[1].model');
});

test('a model that cannot chat, or that the org has not enabled, is rejected', () => {
  assert.equal(paramOf(() => checkVariantModels([{ name: 'a', weight: 1, model: 'local-embed' }], catalog, null)), 'variants[0].model');
  assert.equal(paramOf(() => checkVariantModels([{ name: 'a', weight: 1, model: 'local-chat-mini' }], catalog, ['local-chat'])), 'variants[0].model');
});

test('known, enabled chat models and variants without a model pass', () => {
  const variants = [
    { name: 'a', weight: 1 },
    { name: 'b', weight: 1, model: 'local-chat-mini' },
  ];
  assert.equal(paramOf(() => checkVariantModels(variants, catalog, null)), undefined);
  assert.equal(paramOf(() => checkVariantModels(variants, catalog, ['local-chat-mini'])), undefined);
});

test("a model experiment's target must be a served, chat-capable model the org has enabled, named 'target'", () => {
  assert.equal(paramOf(() => checkTargetModel('nonexistent-model', catalog, null)), 'target');
  assert.equal(paramOf(() => checkTargetModel('local-embed', catalog, null)), 'target');
  assert.equal(paramOf(() => checkTargetModel('local-chat-mini', catalog, ['local-chat'])), 'target');
  assert.throws(() => checkTargetModel('nonexistent-model', catalog, null), { message: "Invalid value for 'target': the model 'nonexistent-model' is not served by this gateway." });
  assert.equal(paramOf(() => checkTargetModel('local-chat', catalog, null)), undefined);
  assert.equal(paramOf(() => checkTargetModel('local-chat', catalog, ['local-chat'])), undefined);
});
