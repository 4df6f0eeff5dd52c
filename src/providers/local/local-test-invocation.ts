import type { GatewayCall } from '../../pipeline/stage.js';
import type { Operation } from '../../protocol/endpoints.js';
import type { Invocation } from '../provider.js';
import type { AuthContext } from '../../tenancy/tenancy-types.js';
import type { CallSignal } from '../../lib/call-signal.js';

/** Builds an Invocation for the local provider's unit tests. */
export function localTestInvocation(
  operation: Operation,
  request: Record<string, unknown>,
  extra: { stream?: boolean; signal?: CallSignal; requestId?: string; files?: GatewayCall['files'] } = {},
): Invocation {
  const signal = extra.signal ?? new AbortController().signal;
  const call: GatewayCall = {
    requestId: extra.requestId ?? 'req_test',
    operation,
    auth: {} as AuthContext,
    model: typeof request['model'] === 'string' ? request['model'] : 'local-chat',
    request,
    stream: extra.stream ?? false,
    includeUsage: true,
    user: undefined,
    signal,
    startedAt: 0,
    files: extra.files,
    record: { headers: {} },
  };
  return {
    call,
    signal,
    target: {
      deploymentId: 'local-test',
      provider: 'local',
      upstreamModel: call.model,
      settings: {},
      timeouts: { connectMs: 1000, firstByteMs: 1000, totalMs: 1000 },
    },
  };
}
