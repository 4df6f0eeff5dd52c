import type { Redis } from 'ioredis';
import { redisScript } from '../lib/redis-script.js';
import { DEFAULT_EWMA_ALPHA, emptyStats, type DeploymentStats, type HealthStore } from './health-store.js';

/**
 * Statistics shared by every instance using one Redis: one hash per deployment, the averages
 * updated in one Lua script (read-modify-write must not interleave between instances). Values go
 * through Lua as strings because Redis truncates Lua numbers to integers on the way out.
 * The in-flight count of an instance that crashed mid-call lingers until the key expires
 * (ten minutes after the last call), which least-busy tolerates.
 */
const END_SCRIPT = `
local key = KEYS[1]
local alpha = tonumber(ARGV[1])
local ttlMs = tonumber(ARGV[2])
local hasSample = ARGV[3] == '1'
local inflight = tonumber(redis.call('HGET', key, 'inflight') or '0') - 1
if inflight < 0 then inflight = 0 end
redis.call('HSET', key, 'inflight', inflight)
if hasSample then
  local function average(field, sample)
    local previous = redis.call('HGET', key, field)
    local value = sample
    if previous and previous ~= '' then value = alpha * sample + (1 - alpha) * tonumber(previous) end
    redis.call('HSET', key, field, string.format('%.6f', value))
  end
  local samples = tonumber(redis.call('HGET', key, 'n') or '0') + 1
  redis.call('HSET', key, 'n', samples)
  average('err', tonumber(ARGV[4]))
  if ARGV[5] ~= '' then average('lat', tonumber(ARGV[5])) end
  if ARGV[6] ~= '' then average('ttft', tonumber(ARGV[6])) end
end
redis.call('PEXPIRE', key, ttlMs)
return 'ok'
`;

const TTL_MS = 600_000;

export function createRedisHealthStore(redis: Redis, options: { prefix?: string; alpha?: number } = {}): HealthStore {
  const prefix = options.prefix ?? 'gw:';
  const alpha = options.alpha ?? DEFAULT_EWMA_ALPHA;
  const keyOf = (deploymentId: string) => `${prefix}health:${deploymentId}`;
  const endScript = redisScript(END_SCRIPT);
  return {
    async begin(deploymentId) {
      await redis.multi().hincrby(keyOf(deploymentId), 'inflight', 1).pexpire(keyOf(deploymentId), TTL_MS).exec();
    },
    async end(deploymentId, sample) {
      await endScript.run(redis, [keyOf(deploymentId)], [
        alpha,
        TTL_MS,
        sample ? '1' : '0',
        sample?.ok ? '0' : '1',
        sample?.latencyMs === undefined ? '' : String(sample.latencyMs),
        sample?.timeToFirstTokenMs === undefined ? '' : String(sample.timeToFirstTokenMs),
      ]);
    },
    async read(deploymentIds) {
      const result = new Map<string, DeploymentStats>();
      if (deploymentIds.length === 0) return result;
      const pipeline = redis.pipeline();
      for (const id of deploymentIds) pipeline.hmget(keyOf(id), 'lat', 'ttft', 'err', 'n', 'inflight');
      const replies = (await pipeline.exec()) ?? [];
      deploymentIds.forEach((id, index) => {
        const [error, values] = replies[index] ?? [null, null];
        if (error || !Array.isArray(values)) {
          result.set(id, emptyStats());
          return;
        }
        const [latency, timeToFirstToken, errorRate, samples, inFlight] = values as Array<string | null>;
        result.set(id, {
          latencyMs: latency ? Number(latency) : null,
          timeToFirstTokenMs: timeToFirstToken ? Number(timeToFirstToken) : null,
          errorRate: errorRate ? Number(errorRate) : 0,
          samples: samples ? Number(samples) : 0,
          inFlight: inFlight ? Math.max(0, Number(inFlight)) : 0,
        });
      });
      return result;
    },
  };
}
