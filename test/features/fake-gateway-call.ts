import type { GatewayCall, Outcome, StreamEvent } from '../../src/pipeline/stage.js';
import type { Operation } from '../../src/protocol/endpoints.js';
import { type AuthContext, DEFAULT_ORG_SETTINGS, type OrgSettings } from '../../src/tenancy/tenancy-types.js';

/** A GatewayCall for stage unit tests: an org, an inference key, and the given request. */
export function fakeCall(options: {
  request: Record<string, unknown>;
  orgId?: string;
  operation?: Operation;
  stream?: boolean;
  includeUsage?: boolean;
  user?: string;
  settings?: Partial<OrgSettings>;
}): GatewayCall {
  const orgId = options.orgId ?? 'org-test';
  const auth: AuthContext = {
    org: {
      id: orgId,
      name: 'Test org',
      tier: 'tier1',
      customLimits: {},
      enabledModels: null,
      budget: null,
      settings: { ...DEFAULT_ORG_SETTINGS, ...options.settings },
      createdAt: 0,
    },
    team: null,
    key: {
      id: `key-${orgId}`,
      orgId,
      teamId: null,
      name: 'test key',
      alias: 'sk-...abcd',
      role: 'inference',
      status: 'active',
      budget: null,
      userBudget: null,
      limits: {},
      userLimits: null,
      allowedModels: null,
      createdAt: 0,
      lastUsedAt: null,
      revokedAt: null,
    },
  };
  return {
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    operation: options.operation ?? 'chat',
    auth,
    model: String(options.request.model ?? 'test-model'),
    request: options.request,
    stream: options.stream ?? options.request.stream === true,
    includeUsage: options.includeUsage ?? false,
    user: options.user,
    signal: new AbortController().signal,
    startedAt: performance.now(),
    record: { headers: {} },
  };
}

export function chatCompletion(content: string, model = 'test-model') {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion' as const,
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content }, finish_reason: 'stop' as const }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
  };
}

/** A stream of raw chunk events as an upstream would send them, content split in pieces. */
export function rawStream(pieces: string[], options: { usage?: boolean; finish?: boolean } = {}): Outcome {
  const base = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'test-model' };
  const events: StreamEvent[] = [{ raw: JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }) }];
  for (const piece of pieces) events.push({ raw: JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }) });
  if (options.finish !== false) events.push({ raw: JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) });
  if (options.usage !== false) {
    events.push({
      raw: JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }),
      usage: { inputTokens: 5, outputTokens: 3 },
      usageOnly: true,
    });
  }
  return { kind: 'stream', events: (async function* () { yield* events; })() };
}

export async function collect(outcome: Outcome): Promise<StreamEvent[]> {
  if (outcome.kind !== 'stream') throw new Error(`expected a stream, got ${outcome.kind}`);
  const events: StreamEvent[] = [];
  for await (const event of outcome.events) events.push(event);
  return events;
}

/** The text a client would read from the events (content deltas of choice 0). */
export function streamText(events: StreamEvent[]): string {
  return events
    .filter((event) => !event.usageOnly)
    .map((event) => event.chunk ?? JSON.parse(event.raw ?? 'null'))
    .map((chunk) => chunk?.choices?.[0]?.delta?.content ?? '')
    .join('');
}
