import type { Redis } from 'ioredis';
import { redisScript } from '../lib/redis-script.js';
import { sendUnhurried } from '../lib/redis-turn-writes.js';
import { DEFAULT_CIRCUIT_OPTIONS, type CircuitOptions, type CircuitPermission, type CircuitStore } from './circuit-store.js';

/**
 * Circuits shared by every instance using one Redis: one hash per deployment, every transition in
 * one Lua script so two instances cannot both take the half-open probe or both announce an
 * outage. Same rules as memory-circuit-store.ts. Keys expire a day after their last change.
 *
 * Two things are kept off the per-call path, where they were a round trip each:
 * - An `allowed` answer is trusted for `closedCacheMs` (100 ms) on this instance. After that, for
 *   up to `closedStaleMs` (1 s) since it was last confirmed, a call is still let through at once
 *   while the state is re-read in the background (one read at a time, unhurried: it leaves with the
 *   next call's admission write, lib/redis-turn-writes.ts); the re-read renews the
 *   trust, or ends it if the circuit is no longer closed. A circuit that another instance opens is
 *   therefore seen here about 100 ms plus one round trip later under steady traffic, and at most
 *   one call later after a pause; a failure here drops the trust at once, and open or half-open
 *   answers are never reused (so the probe stays single).
 * - Successes of ordinary calls are counted in memory and sent every `flushIntervalMs` (100 ms), or
 *   with this instance's next script call for that deployment, whichever comes first, so the
 *   order of this instance's own outcomes is kept. A probe's success is sent at once.
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
local successes = tonumber(ARGV[10])
local successAt = tonumber(ARGV[11])

local h = redis.call('HMGET', key, 'state', 'cf', 'wf', 'wc', 'ws', 'oa', 'pa', 'r')
local state = h[1] or 'closed'
local cf = tonumber(h[2] or '0')
local wf = tonumber(h[3] or '0')
local wc = tonumber(h[4] or '0')
local ws = tonumber(h[5] or tostring(now))
local oa = h[6] or ''
local pa = h[7] or ''
local r = h[8] or ''

if successes > 0 then
  if successAt - ws >= windowMs then ws = successAt; wc = 0; wf = 0 end
  wc = wc + successes; cf = 0
  if state ~= 'closed' then state = 'closed'; wc = successes - 1; wf = 0; ws = successAt; oa = ''; pa = ''; r = '' end
end
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
elseif op == 'read' and successes == 0 then
  return {state, tostring(cf), tostring(wf), tostring(wc), oa, r}
end
redis.call('HSET', key, 'state', state, 'cf', cf, 'wf', wf, 'wc', wc, 'ws', ws, 'oa', oa, 'pa', pa, 'r', r)
redis.call('PEXPIRE', key, ttlMs)
if op == 'read' then return {state, tostring(cf), tostring(wf), tostring(wc), oa, r} end
return result
`;

export interface RedisCircuitStoreOptions extends Partial<CircuitOptions> {
  /** Key prefix, e.g. "gw:"; tests use a unique one. */
  prefix?: string;
  /** How long this instance trusts an `allowed` answer (default 100 ms). */
  closedCacheMs?: number;
  /** How long after its confirmation an `allowed` answer still admits calls while it is re-read (default 1 s). */
  closedStaleMs?: number;
  /** How long successes are counted in memory before they are sent (default 100 ms). */
  flushIntervalMs?: number;
  onError?(error: unknown): void;
}

export function createRedisCircuitStore(redis: Redis, options: RedisCircuitStoreOptions = {}): CircuitStore {
  const settings = { ...DEFAULT_CIRCUIT_OPTIONS, ...options };
  const prefix = options.prefix ?? 'gw:';
  const closedCacheMs = options.closedCacheMs ?? 100;
  const closedStaleMs = Math.max(closedCacheMs, options.closedStaleMs ?? 1_000);
  const script = redisScript(SCRIPT);
  /** When (this instance's clock, as passed in) each deployment's `allowed` answer was last confirmed. */
  const closedSince = new Map<string, number>();
  /** Deployments whose state is being re-read in the background. */
  const revalidating = new Set<string>();
  /** Deployments whose half-open probe this instance holds: its outcome is sent at once. */
  const probing = new Set<string>();
  let pendingSuccesses = new Map<string, { count: number; at: number }>();
  let timer: NodeJS.Timeout | undefined;

  const run = (op: string, deploymentId: string, now: number, reason = '') => {
    const successes = pendingSuccesses.get(deploymentId);
    pendingSuccesses.delete(deploymentId);
    return script.run(redis, [`${prefix}circuit:${deploymentId}`], [
      op,
      now,
      reason,
      settings.consecutiveFailures,
      settings.failureRate,
      settings.minimumCalls,
      settings.windowMs,
      settings.coolDownMs,
      86_400_000,
      successes?.count ?? 0,
      successes?.at ?? now,
    ]);
  };

  async function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const batch = [...pendingSuccesses];
    if (batch.length === 0) return;
    try {
      const writeBatch = () => Promise.all(batch.map(([deploymentId, { at }]) => run('flush', deploymentId, at)));
      // Nobody waits for these: they join the next call's admission write (lib/redis-turn-writes.ts).
      await sendUnhurried(redis, writeBatch);
    } catch (error) {
      // Successes only reset failure counts; a lost batch leaves them a little higher for a while.
      options.onError?.(error);
    }
  }

  /** Re-reads a trusted circuit without holding up the call that noticed the trust had aged. */
  function revalidate(deploymentId: string, now: number): void {
    if (revalidating.has(deploymentId)) return;
    revalidating.add(deploymentId);
    // Unhurried: the call that noticed goes upstream without a write of its own to Redis before it
    // (streams, a call every ~60 ms each, met an aged trust on most calls); the re-read rides in
    // the next admission write, or leaves within the connection's few-ms window.
    (sendUnhurried(redis, () => run('read', deploymentId, now)) as Promise<string[]>).then(
      ([state]) => {
        revalidating.delete(deploymentId);
        // A local failure meanwhile dropped the trust: only a blocking acquire may restore it.
        if (!closedSince.has(deploymentId)) return;
        if (state === 'closed') closedSince.set(deploymentId, now);
        else closedSince.delete(deploymentId);
      },
      (error: unknown) => {
        revalidating.delete(deploymentId);
        closedSince.delete(deploymentId);
        options.onError?.(error);
      },
    );
  }

  async function acquireShared(deploymentId: string, now: number): Promise<CircuitPermission> {
    const permission = (await run('acquire', deploymentId, now)) as CircuitPermission;
    if (permission === 'allowed') closedSince.set(deploymentId, now);
    else closedSince.delete(deploymentId);
    if (permission === 'probe') probing.add(deploymentId);
    return permission;
  }

  return {
    acquire(deploymentId, now) {
      const confirmedAt = closedSince.get(deploymentId);
      if (confirmedAt !== undefined) {
        const age = now - confirmedAt;
        if (age < closedCacheMs) return 'allowed';
        if (age < closedStaleMs) {
          revalidate(deploymentId, now);
          return 'allowed';
        }
      }
      return acquireShared(deploymentId, now);
    },
    recordSuccess(deploymentId, now) {
      const pending = pendingSuccesses.get(deploymentId);
      if (pending) {
        pending.count += 1;
        pending.at = now;
      } else {
        pendingSuccesses.set(deploymentId, { count: 1, at: now });
      }
      if (probing.delete(deploymentId)) return run('flush', deploymentId, now).then(() => undefined);
      timer ??= setTimeout(() => void flush(), options.flushIntervalMs ?? 100).unref();
    },
    async recordFailure(deploymentId, now, reason) {
      closedSince.delete(deploymentId);
      probing.delete(deploymentId);
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
    flush,
  };
}
