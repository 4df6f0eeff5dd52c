import type { Redis } from 'ioredis';
import { redisScript } from '../lib/redis-script.js';
import { DEFAULT_CIRCUIT_OPTIONS, type CircuitOptions, type CircuitPermission, type CircuitStore } from './circuit-store.js';

/**
 * Circuits shared by every instance using one Redis: one hash per deployment, every transition in
 * one Lua script so two instances cannot both take the half-open probe or both announce an
 * outage. Same rules as memory-circuit-store.ts. Keys expire a day after their last change.
 */
const SCRIPT = `
local key = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
local reason = ARGV[3]
local consecutiveLimit = tonumber(ARGV[4])
local failureRate = tonumber(ARGV[5])
local minimumCalls = tonumber(ARGV[6])
local windowMs = tonumber(ARGV[7])
local coolDownMs = tonumber(ARGV[8])
local ttlMs = tonumber(ARGV[9])

local h = redis.call('HMGET', key, 'state', 'cf', 'wf', 'wc', 'ws', 'oa', 'pa', 'r')
local state = h[1] or 'closed'
local cf = tonumber(h[2] or '0')
local wf = tonumber(h[3] or '0')
local wc = tonumber(h[4] or '0')
local ws = tonumber(h[5] or tostring(now))
local oa = h[6] or ''
local pa = h[7] or ''
local r = h[8] or ''
if now - ws >= windowMs then ws = now; wc = 0; wf = 0 end

local result = 'ok'
if op == 'acquire' then
  if state == 'closed' then
    result = 'allowed'
  elseif state == 'open' then
    if now - tonumber(oa ~= '' and oa or tostring(now)) < coolDownMs then
      result = 'denied'
    else
      state = 'half_open'; pa = tostring(now); result = 'probe'
    end
  else
    if pa ~= '' and now - tonumber(pa) < coolDownMs then result = 'denied' else pa = tostring(now); result = 'probe' end
  end
elseif op == 'success' then
  wc = wc + 1; cf = 0
  if state ~= 'closed' then state = 'closed'; wc = 0; wf = 0; ws = now; oa = ''; pa = ''; r = '' end
elseif op == 'failure' then
  wc = wc + 1; wf = wf + 1; cf = cf + 1
  result = '0'
  if state == 'half_open' then
    state = 'open'; oa = tostring(now); pa = ''; r = reason
  elseif state == 'closed' then
    if cf >= consecutiveLimit or (wc >= minimumCalls and wf / wc >= failureRate) then
      state = 'open'; oa = tostring(now); r = reason; result = '1'
    end
  end
elseif op == 'read' then
  return {state, tostring(cf), tostring(wf), tostring(wc), oa, r}
end
redis.call('HSET', key, 'state', state, 'cf', cf, 'wf', wf, 'wc', wc, 'ws', ws, 'oa', oa, 'pa', pa, 'r', r)
redis.call('PEXPIRE', key, ttlMs)
return result
`;

export interface RedisCircuitStoreOptions extends Partial<CircuitOptions> {
  /** Key prefix, e.g. "gw:"; tests use a unique one. */
  prefix?: string;
}

export function createRedisCircuitStore(redis: Redis, options: RedisCircuitStoreOptions = {}): CircuitStore {
  const settings = { ...DEFAULT_CIRCUIT_OPTIONS, ...options };
  const prefix = options.prefix ?? 'gw:';
  const script = redisScript(SCRIPT);
  const run = (op: string, deploymentId: string, now: number, reason = '') =>
    script.run(redis, [`${prefix}circuit:${deploymentId}`], [
      op,
      now,
      reason,
      settings.consecutiveFailures,
      settings.failureRate,
      settings.minimumCalls,
      settings.windowMs,
      settings.coolDownMs,
      86_400_000,
    ]);

  return {
    async acquire(deploymentId, now) {
      return (await run('acquire', deploymentId, now)) as CircuitPermission;
    },
    async recordSuccess(deploymentId, now) {
      await run('success', deploymentId, now);
    },
    async recordFailure(deploymentId, now, reason) {
      return (await run('failure', deploymentId, now, reason)) === '1';
    },
    async read(deploymentId, now) {
      const [state, consecutive, windowFailures, windowCalls, openedAt, reason] = (await run('read', deploymentId, now)) as string[];
      return {
        state: state as 'closed' | 'open' | 'half_open',
        consecutiveFailures: Number(consecutive),
        windowFailures: Number(windowFailures),
        windowCalls: Number(windowCalls),
        openedAt: openedAt ? Number(openedAt) : null,
        reason: reason || null,
      };
    },
  };
}
