import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import { parseJsonBody } from '../../http/json-body.js';
import { forgetJsonText } from '../../lib/json-source-text.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { findCompatiblePreset } from '../openai/presets.js';
import { createCompatibleAdapter } from './compatible-adapter.js';
import { requestTextWithModel } from './public-model.js';

function chatTranslator(presetId = 'openai'): OperationTranslator<Record<string, unknown>> {
  return createCompatibleAdapter(findCompatiblePreset(presetId)!).translators.chat as OperationTranslator<Record<string, unknown>>;
}

function upstreamBody(request: Record<string, unknown>, options: { stream?: boolean; presetId?: string; upstreamModel?: string } = {}): string {
  const target = testTarget({ provider: options.presetId ?? 'openai', upstreamModel: options.upstreamModel ?? 'gpt-4o-2024-08-06' });
  const built = chatTranslator(options.presetId).buildRequest(request, { ...testContext(target, { model: 'gpt-public' }), stream: options.stream ?? false });
  return built.body as string;
}

// Spacing, key order and the number forms are the client's; JSON.stringify would have given 1 for 1.0 and 100 for 1e2.
const CLIENT_TEXT = '{ "model": "gpt-public", "messages": [{"role": "user", "content": "say \\"model\\" twice"}], "temperature": 1.0, "max_tokens": 1e2 }';

test("a body forwarded as it came is the client's own text with only the model changed", () => {
  const request = parseJsonBody(CLIENT_TEXT) as Record<string, unknown>;
  assert.equal(upstreamBody(request), CLIENT_TEXT.replace('"gpt-public"', '"gpt-4o-2024-08-06"'));
  assert.equal(upstreamBody(request, { upstreamModel: 'gpt-public' }), CLIENT_TEXT);
});

test('a body the pipeline made, changed or must clean is encoded anew', () => {
  const parsed = parseJsonBody(CLIENT_TEXT) as Record<string, unknown>;
  const encoded = (request: Record<string, unknown>, options?: Parameters<typeof upstreamBody>[1]) => JSON.parse(upstreamBody(request, options)) as Record<string, unknown>;
  // A copy (a template, an A/B variant, a fallback model) has no text of its own.
  const changed = encoded({ ...parsed, temperature: 0.5 });
  assert.equal(changed.temperature, 0.5);
  assert.equal(changed.model, 'gpt-4o-2024-08-06');
  // gw_* fields never reach the upstream, nor parameters the upstream refuses.
  const withExtras = parseJsonBody('{"model":"gpt-public","messages":[],"gw_cache":true}') as Record<string, unknown>;
  assert.deepEqual(encoded(withExtras), { model: 'gpt-4o-2024-08-06', messages: [] });
  const withRefused = parseJsonBody('{"model":"gpt-public","messages":[],"logit_bias":{"1":2}}') as Record<string, unknown>;
  assert.deepEqual(encoded(withRefused, { presetId: 'groq' }), { model: 'gpt-4o-2024-08-06', messages: [] });
  // A stream asks for usage, which the client's text may not.
  const streamed = encoded(parseJsonBody('{"model":"gpt-public","messages":[],"stream":true}') as Record<string, unknown>, { stream: true });
  assert.deepEqual(streamed.stream_options, { include_usage: true });
  // Once a stage vouches for the object (the pre-call guardrails), the object is what goes.
  const guarded = parseJsonBody(CLIENT_TEXT) as Record<string, unknown>;
  forgetJsonText(guarded);
  assert.equal(upstreamBody(guarded), JSON.stringify({ ...guarded, model: 'gpt-4o-2024-08-06' }));
  // A body parsed with the prototype-key reviver kept a key its text still has.
  const revived = parseJsonBody('{"model":"gpt-public","messages":[],"__proto__":{"x":1}}') as Record<string, unknown>;
  assert.equal(upstreamBody(revived).includes('__proto__'), false);
});

test('the model is spliced in only where it is surely the top-level key', () => {
  const splice = (text: string, publicModel = 'gpt-public') => requestTextWithModel(text, publicModel, 'up');
  assert.equal(splice('{"model":"gpt-public","n":1}'), '{"model":"up","n":1}');
  assert.equal(splice('{"model" : "gpt-public"}'), '{"model" : "up"}');
  // "model" twice: a nested key, or a string value.
  assert.equal(splice('{"model":"gpt-public","tools":[{"parameters":{"model":"x"}}]}'), undefined);
  assert.equal(splice('{"messages":[{"role":"model"}],"model":"gpt-public"}'), undefined);
  // An escape could spell the top-level key, leaving the one found a nested one.
  assert.equal(splice('{"mod\\u0065l":"gpt-public","x":{"model":"gpt-public"}}'), undefined);
  // The value found must be the very text of the parsed model.
  assert.equal(splice('{"model":"gpt-pub\\/lic"}', 'gpt-pub/lic'), undefined);
  assert.equal(splice('{"model":"other"}'), undefined);
  assert.equal(splice('{"model":7}'), undefined);
});
