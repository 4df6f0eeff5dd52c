import type { Redis } from 'ioredis';
import { redisScript } from '../lib/redis-script.js';
import { sendUnhurried } from '../lib/redis-turn-writes.js';
import { DEFAULT_EWMA_ALPHA, emptyStats, type CallSample, type DeploymentStats, type HealthStore } from './health-store.js';

/**
 * Statistics shared by every instance using one Redis: one hash per deployment. Calls are first
 * summed in memory and added to Redis every `flushIntervalMs` (100 ms) in one pipelined write,
 * instead of two round trips per call: on the request path those writes were a fifth of the CPU
 * in Postgres + Redis mode. Another instance therefore sees this one's calls up to one interval
 * late, which the least-busy and least-latency strategies do not notice; this instance's own
 * reads include what it has not flushed yet.
 *
 * The moving averages stay exact: k samples s1..sk folded into a previous value p give
 * `A + D·p` with `A = Σ α(1−α)^(k−i)·s_i` and `D = (1−α)^k`, so the script needs only A and D
 * (and the value to use when there is no previous one). Values go through Lua as strings because
 * Redis truncates Lua numbers to integers on the way out. The in-flight count of an instance that
 * crashed mid-call lingers until the key expires (ten minutes after the last call), which
 * least-busy tolerates.
 */
const FLUSH_SCRIPT = `
local key = KEYS[1]
local ttlMs = tonumber(ARGV[1])
local inflight = tonumber(redis.call('HGET', key, 'inflight') or '0') + tonumber(ARGV[2])
if inflight < 0 then inflight = 0 end
redis.call('HSET', key, 'inflight', inflight)
local samples = tonumber(ARGV[3])
if samples > 0 then
  redis.call('HSET', key, 'n', tonumber(redis.call('HGET', key, 'n') or '0') + samples)
  local function fold(field, at)
    if ARGV[at] == '' then return end
    local previous = redis.call('HGET', key, field)
    local value = tonumber(ARGV[at + 2])
    if previous and previous ~= '' then value = tonumber(ARGV[at]) + tonumber(ARGV[at + 1]) * tonumber(previous) end
    redis.call('HSET', key, field, string.format('%.6f', value))
  end
  fold('err', 4)
  fold('lat', 7)
  fold('ttft', 10)
end
redis.call('PEXPIRE', key, ttlMs)
return 'ok'
`;

const TTL_MS = 600_000;

/** k samples of one statistic folded into `weighted + decay · previous` (see above). */
interface Fold {
  weighted: number;
  decay: number;
  /** The value when there was no previous one: the first sample, then folded as usual. */
  alone: number | null;
}

interface Pending {
  inflightDelta: number;
  samples: number;
  err: Fold;
  lat: Fold;
  ttft: Fold;
}

const emptyFold = (): Fold => ({ weighted: 0, decay: 1, alone: null });
const emptyPending = (): Pending => ({ inflightDelta: 0, samples: 0, err: emptyFold(), lat: emptyFold(), ttft: emptyFold() });

function foldIn(fold: Fold, sample: number, alpha: number): void {
  fold.weighted = alpha * sample + (1 - alpha) * fold.weighted;
  fold.decay *= 1 - alpha;
  fold.alone = fold.alone === null ? sample : alpha * sample + (1 - alpha) * fold.alone;
}

/** The folded value on top of `previous` (null: no value yet, nothing pending: unchanged). */
function applyFold(fold: Fold, previous: number | null): number | null {
  if (fold.alone === null) return previous;
  return previous === null ? fold.alone : fold.weighted + fold.decay * previous;
}

const foldArgs = (fold: Fold): string[] => (fold.alone === null ? ['', '', ''] : [String(fold.weighted), String(fold.decay), String(fold.alone)]);

export interface RedisHealthStoreOptions {
  prefix?: string;
  alpha?: number;
  /** How long calls are summed in memory before they are added to Redis (default 100 ms). */
  flushIntervalMs?: number;
  onError?(error: unknown): void;
}

export function createRedisHealthStore(redis: Redis, options: RedisHealthStoreOptions = {}): HealthStore & { flush(): Promise<void> } {
  const prefix = options.prefix ?? 'gw:';
  const alpha = options.alpha ?? DEFAULT_EWMA_ALPHA;
  const keyOf = (deploymentId: string) => `${prefix}health:${deploymentId}`;
  const flushScript = redisScript(FLUSH_SCRIPT);
  let pending = new Map<string, Pending>();
  let timer: NodeJS.Timeout | undefined;

  function pendingFor(deploymentId: string): Pending {
    let entry = pending.get(deploymentId);
    if (!entry) {
      entry = emptyPending();
      pending.set(deploymentId, entry);
    }
    timer ??= setTimeout(() => void flush(), options.flushIntervalMs ?? 100).unref();
    return entry;
  }

  async function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      const writeBatch = () =>
        Promise.all(
          [...batch].map(([deploymentId, entry]) =>
            flushScript.run(redis, [keyOf(deploymentId)], [
              TTL_MS,
              entry.inflightDelta,
              entry.samples,
              ...foldArgs(entry.err),
              ...foldArgs(entry.lat),
              ...foldArgs(entry.ttft),
            ]),
          ),
        );
      // Nobody waits for these: they join the next call's admission write (lib/redis-turn-writes.ts).
      await sendUnhurried(redis, writeBatch);
    } catch (error) {
      // Statistics are advisory: a lost batch only skews averages for a while. The in-flight
      // count would drift for good, so that part is kept for the next flush.
      for (const [deploymentId, entry] of batch) pendingFor(deploymentId).inflightDelta += entry.inflightDelta;
      options.onError?.(error);
    }
  }

  return {
    begin(deploymentId) {
      pendingFor(deploymentId).inflightDelta += 1;
    },
    end(deploymentId, sample: CallSample | null) {
      const entry = pendingFor(deploymentId);
      entry.inflightDelta -= 1;
      if (!sample) return;
      entry.samples += 1;
      foldIn(entry.err, sample.ok ? 0 : 1, alpha);
      if (sample.latencyMs !== undefined) foldIn(entry.lat, sample.latencyMs, alpha);
      if (sample.timeToFirstTokenMs !== undefined) foldIn(entry.ttft, sample.timeToFirstTokenMs, alpha);
    },
    async read(deploymentIds) {
      const result = new Map<string, DeploymentStats>();
      if (deploymentIds.length === 0) return result;
      const pipeline = redis.pipeline();
      for (const id of deploymentIds) pipeline.hmget(keyOf(id), 'lat', 'ttft', 'err', 'n', 'inflight');
      const replies = (await pipeline.exec()) ?? [];
      deploymentIds.forEach((id, index) => {
        const [error, values] = replies[index] ?? [null, null];
        const shared = error || !Array.isArray(values) ? emptyStats() : parseStats(values as Array<string | null>);
        const local = pending.get(id);
        if (!local) return result.set(id, shared);
        result.set(id, {
          latencyMs: applyFold(local.lat, shared.latencyMs),
          timeToFirstTokenMs: applyFold(local.ttft, shared.timeToFirstTokenMs),
          errorRate: applyFold(local.err, shared.samples > 0 ? shared.errorRate : null) ?? 0,
          samples: shared.samples + local.samples,
          inFlight: Math.max(0, shared.inFlight + local.inflightDelta),
        });
      });
      return result;
    },
    flush,
  };
}

function parseStats([latency, timeToFirstToken, errorRate, samples, inFlight]: Array<string | null>): DeploymentStats {
  return {
    latencyMs: latency ? Number(latency) : null,
    timeToFirstTokenMs: timeToFirstToken ? Number(timeToFirstToken) : null,
    errorRate: errorRate ? Number(errorRate) : 0,
    samples: samples ? Number(samples) : 0,
    inFlight: inFlight ? Math.max(0, Number(inFlight)) : 0,
  };
}
