import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSseParser } from '../../src/lib/sse-parser.js';
import type { StreamEvent } from '../../src/pipeline/stage.js';
import type { StreamTranslator, TranslationContext, UpstreamStreamMessage } from '../../src/providers/http/provider-adapter.js';
import type { DeploymentTarget } from '../../src/providers/provider.js';

/**
 * Fixture pairs for translator tests. Expected files are checked in; GW_UPDATE_FIXTURES=1 rewrites
 * them from the current output (review the diff before keeping it).
 */
export function readFixture(directory: string, name: string): string {
  return readFileSync(join(directory, name), 'utf8');
}

export function readJsonFixture<T = unknown>(directory: string, name: string): T {
  return JSON.parse(readFixture(directory, name)) as T;
}

export function assertMatchesFixture(directory: string, name: string, actual: unknown): void {
  const path = join(directory, name);
  const normalized: unknown = JSON.parse(JSON.stringify(actual));
  if (process.env.GW_UPDATE_FIXTURES === '1' || !existsSync(path)) {
    if (process.env.GW_UPDATE_FIXTURES !== '1') assert.fail(`missing fixture ${name}; run with GW_UPDATE_FIXTURES=1 to create it`);
    writeFileSync(path, `${JSON.stringify(normalized, null, 2)}\n`);
    return;
  }
  assert.deepEqual(normalized, JSON.parse(readFileSync(path, 'utf8')), `output differs from ${name}`);
}

export function testTarget(overrides: Partial<DeploymentTarget> = {}): DeploymentTarget {
  return {
    deploymentId: 'dep-1',
    provider: 'test',
    upstreamModel: 'upstream-model',
    apiKey: 'test-upstream-key',
    settings: {},
    timeouts: { connectMs: 1000, firstByteMs: 1000, totalMs: 1000 },
    ...overrides,
  };
}

export function testContext(target: DeploymentTarget, overrides: Partial<TranslationContext> = {}): TranslationContext {
  return { model: 'public-model', target, requestId: 'req-1', created: 1_700_000_000, ...overrides };
}

/** What a stream produced: the canonical events, and the error that ended it, if any. */
export interface StreamOutcome {
  events: StreamEvent[];
  error?: { code: string; status: number; message: string; details?: Record<string, unknown> };
}

/** Runs framed messages through a translator, as the upstream client does. */
export function translateMessages(translator: StreamTranslator, messages: Iterable<UpstreamStreamMessage>): StreamOutcome {
  const events: StreamEvent[] = [];
  try {
    for (const message of messages) events.push(...translator.translate(message));
    events.push(...translator.finish());
    return { events };
  } catch (error) {
    const failure = error as { code: string; status: number; message: string; details?: Record<string, unknown> };
    return { events, error: { code: failure.code, status: failure.status, message: failure.message, details: failure.details } };
  }
}

/** Splits SSE text into messages, feeding the parser `pieceSize` bytes at a time (0 = all at once). */
export function sseMessages(text: string, pieceSize = 0): UpstreamStreamMessage[] {
  const parser = createSseParser();
  const bytes = Buffer.from(text, 'utf8');
  const messages: UpstreamStreamMessage[] = [];
  const step = pieceSize > 0 ? pieceSize : bytes.length;
  for (let offset = 0; offset < bytes.length; offset += step) messages.push(...parser.push(bytes.subarray(offset, offset + step)));
  messages.push(...parser.end());
  return messages.map(({ event, data }) => (event === undefined ? { data } : { event, data }));
}

/**
 * Translates an SSE fixture whole and split into 1-byte and 7-byte reads, asserts the three runs
 * agree, and compares the result with `<expectedName>`.
 */
export function assertSseFixture(
  directory: string,
  sseName: string,
  expectedName: string,
  createTranslator: () => StreamTranslator,
): StreamOutcome {
  const text = readFixture(directory, sseName);
  const whole = translateMessages(createTranslator(), sseMessages(text));
  for (const pieceSize of [1, 7]) {
    const split = translateMessages(createTranslator(), sseMessages(text, pieceSize));
    assert.deepEqual(split, whole, `${sseName} split into ${pieceSize}-byte reads differs`);
  }
  assertMatchesFixture(directory, expectedName, whole);
  return whole;
}
