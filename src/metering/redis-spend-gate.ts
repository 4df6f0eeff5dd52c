import type { Redis } from 'ioredis';
import { UnseededAccountsError, type AccountState, type SettledAccount, type SpendAccount, type SpendGate } from './spend-gate.js';
import { redisScript, type RedisScript } from '../lib/redis-script.js';
import { sendUnhurried } from '../lib/redis-turn-writes.js';
import { withTimeout } from '../lib/with-timeout.js';

export interface RedisSpendGateOptions {
  redis: Redis;
  /** Prefix of every key this gate writes; lets tests and tenants share one Redis. */
  prefix?: string;
  now?: () => number;
  /** A command slower than this fails (→ 503 credit_check_failed) instead of holding the request. */
  commandTimeoutMs?: number;
  /** How often this instance releases expired holds (of any instance); 0 disables the timer. */
  sweepIntervalMs?: number;
  onError?: (error: unknown) => void;
}

/*
 * Lua notes. Every script runs atomically on the Redis server, which is what makes "check all
 * accounts, then hold on all of them" safe across instances. Amounts reach Redis commands only as
 * the decimal strings the client sent (ARGV) or Redis returned, never as Lua numbers: Lua formats
 * numbers with 14 significant digits, which would corrupt nano-dollar sums past 1e14. Lua numbers
 * (doubles) are used only to compare, which is exact below 2^53.
 */

// Takes a hold's amount off a counter's reserved total. A counter that is gone is not recreated:
// what was reserved on it went with it.
const FREE_HELD_BODY = `
local function freeHeld(key, amount)
  if redis.call('EXISTS', key) == 0 then return end
  if redis.call('HINCRBY', key, 'reserved', '-' .. amount) < 0 then redis.call('HSET', key, 'reserved', '0') end
end
`;

// What each account (KEYS[3..]) has left under its limit (ARGV[base + 2i]; '' = its credited
// total). Only a counter with the 'seeded' mark is trusted: one without it was never seeded, was
// marked for re-seeding, or was lost (Redis restarted empty, flushed or evicted it), and reading it
// as zero would refuse every credit call and forget all budget spend. Those accounts' indexes come
// back instead, and the script changes nothing, so that no hold recreates a counter without its
// spend; the instance seeds them from SQL and tries again.
const AVAILABILITY_BODY = `
local function availability(base)
  local available, unseeded = {}, {}
  for i = 1, #KEYS - 2 do
    local values = redis.call('HMGET', KEYS[i + 2], 'spent', 'reserved', 'credited', 'seeded')
    if not values[4] then
      unseeded[#unseeded + 1] = i - 1
    else
      local limit = ARGV[base + i * 2]
      local cap
      if limit == '' then cap = tonumber(values[3] or '0') else cap = tonumber(limit) end
      available[i] = cap - tonumber(values[1] or '0') - tonumber(values[2] or '0')
    end
  end
  return available, unseeded
end
`;

// The hold hash has no expiry: the sweeper needs its amount and accounts to release it, however
// long after its deadline it runs (all instances down for hours). Settle, release and sweep delete it.
const RESERVE = `${AVAILABILITY_BODY}
local available, unseeded = availability(2)
if #unseeded > 0 then return {2, unpack(unseeded)} end
local amount = tonumber(ARGV[2])
local n = #KEYS - 2
for i = 1, n do
  if amount > available[i] or available[i] <= 0 then return {0, i - 1, tostring(available[i])} end
end
local names = {}
for i = 1, n do
  local key = KEYS[i + 2]
  if ARGV[2] ~= '0' then redis.call('HINCRBY', key, 'reserved', ARGV[2]) end
  if ARGV[3 + i * 2] ~= '0' then redis.call('PEXPIREAT', key, ARGV[3 + i * 2]) end
  names[i] = key
end
redis.call('HSET', KEYS[1], 'amount', ARGV[2], 'keys', table.concat(names, '\\n'))
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {1}
`;

// RESERVE's check, then a hold of min(wanted, least available / share), at least the minimum. The
// held amount is formatted with %d (exact below 2^53), not tostring, which keeps 14 digits.
const CLAIM = `${AVAILABILITY_BODY}
local available, unseeded = availability(4)
if #unseeded > 0 then return {2, unpack(unseeded)} end
local minimum = tonumber(ARGV[2])
local n = #KEYS - 2
local least
for i = 1, n do
  if minimum > available[i] or available[i] <= 0 then return {0, i - 1, tostring(available[i])} end
  if least == nil or available[i] < least then least = available[i] end
end
local grant = math.floor(least / tonumber(ARGV[5]))
if grant > tonumber(ARGV[4]) then grant = tonumber(ARGV[4]) end
local amount = ARGV[2]
if grant > minimum then amount = string.format('%d', grant) end
local names = {}
for i = 1, n do
  local key = KEYS[i + 2]
  if amount ~= '0' then redis.call('HINCRBY', key, 'reserved', amount) end
  if ARGV[5 + i * 2] ~= '0' then redis.call('PEXPIREAT', key, ARGV[5 + i * 2]) end
  names[i] = key
end
redis.call('HSET', KEYS[1], 'amount', amount, 'keys', table.concat(names, '\\n'))
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {1, amount}
`;

// Adds a settled cost to each account (KEYS[3..]) and frees what was held for it; the accounts'
// limits and expiries are ARGV[base + 2i] and ARGV[base + 1 + 2i]. Returns spent and limit per account.
// A counter that is gone is not recreated, and one without the 'seeded' mark gets no spend (0 and 0
// answered): the ledger has the cost, and seeding it from SQL counts it.
const SETTLE_ACCOUNTS_BODY = `
${FREE_HELD_BODY}
local function settleAccounts(held, cost, base)
  local out = {}
  for i = 1, #KEYS - 2 do
    local key = KEYS[i + 2]
    if held and held ~= '0' then freeHeld(key, held) end
    if redis.call('HEXISTS', key, 'seeded') == 1 then
      local limit = ARGV[base + i * 2]
      if limit == '' then limit = redis.call('HGET', key, 'credited') or '0' end
      out[2 * i - 1] = redis.call('HINCRBY', key, 'spent', cost)
      out[2 * i] = limit
      if ARGV[base + 1 + i * 2] ~= '0' then redis.call('PEXPIREAT', key, ARGV[base + 1 + i * 2]) end
    else
      out[2 * i - 1] = 0
      out[2 * i] = 0
    end
  end
  return out
end
`;

// One call's part of a claim: a field per draw id makes a replay a no-op while the claim lives.
const DRAW = `${SETTLE_ACCOUNTS_BODY}
local live = redis.call('EXISTS', KEYS[1]) == 1
if live then
  if redis.call('HSETNX', KEYS[1], 'd:' .. ARGV[1], '1') == 0 then return {} end
  redis.call('HINCRBY', KEYS[1], 'amount', '-' .. ARGV[2])
elseif ARGV[#ARGV] == 'held' then
  return {}
end
local held = nil
if live then held = ARGV[2] end
return settleAccounts(held, ARGV[3], 2)
`;

const SETTLE = `${SETTLE_ACCOUNTS_BODY}
local amount = redis.call('HGET', KEYS[1], 'amount')
if not amount and ARGV[#ARGV] == 'held' then return {} end
local out = settleAccounts(amount, ARGV[2], 1)
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return out
`;

const RELEASE_BODY = `
${FREE_HELD_BODY}
local function release(holdKey)
  local hold = redis.call('HMGET', holdKey, 'amount', 'keys')
  if not hold[1] then return 0 end
  if hold[1] ~= '0' then
    for key in string.gmatch(hold[2], '[^\\n]+') do freeHeld(key, hold[1]) end
  end
  redis.call('DEL', holdKey)
  return 1
end
`;

const RELEASE = `${RELEASE_BODY}
local released = release(KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return released
`;

const SWEEP = `${RELEASE_BODY}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  release(ARGV[2] .. id)
  redis.call('ZREM', KEYS[1], id)
end
return #ids
`;

// Set-if-unseeded. A counter without the mark may hold 'reserved' of holds still running (they
// landed before it was marked for re-seeding): that is kept; its spent and credited are replaced.
const SEED = `
if redis.call('HEXISTS', KEYS[1], 'seeded') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spent', ARGV[1], 'credited', ARGV[2], 'seeded', '1')
redis.call('HSETNX', KEYS[1], 'reserved', '0')
if ARGV[3] ~= '0' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1
`;

const UNSEED = `
for i = 1, #KEYS do redis.call('HDEL', KEYS[i], 'seeded') end
return #KEYS
`;

// A top-up on a counter that is not seeded adds nothing (false): the seeding reads SQL, which has it.
const ADD_CREDIT = `
if redis.call('HEXISTS', KEYS[1], 'seeded') == 0 then return false end
return redis.call('HINCRBY', KEYS[1], 'credited', ARGV[1])
`;

/** SETTLE's and DRAW's reply: spent and limit per account, or nothing when a replay found no hold. */
function settledAccounts(reply: Array<number | string>, count: number): SettledAccount[] {
  if (reply.length === 0) return [];
  const settled: SettledAccount[] = [];
  for (let index = 0; index < count; index++) settled.push({ spentNanos: Number(reply[2 * index]), limitNanos: Number(reply[2 * index + 1]) });
  return settled;
}

const SWEEP_BATCH = 500;
/** RESERVE's and CLAIM's answer when accounts are not seeded: {2, index...}. */
const UNSEEDED = 2;

function unseededError(reply: Array<number | string>, accounts: readonly SpendAccount[]): UnseededAccountsError {
  return new UnseededAccountsError(reply.slice(1).map((index) => accounts[Number(index)].key));
}

export function createRedisSpendGate(options: RedisSpendGateOptions): SpendGate {
  const { redis } = options;
  const prefix = options.prefix ?? 'gw:spend:';
  const now = options.now ?? Date.now;
  const timeoutMs = options.commandTimeoutMs ?? 2000;
  const deadlines = `${prefix}holds`;
  const holdPrefix = `${prefix}hold:`;
  const scripts = {
    reserve: redisScript(RESERVE),
    settle: redisScript(SETTLE),
    release: redisScript(RELEASE),
    sweep: redisScript(SWEEP),
    seed: redisScript(SEED),
    unseed: redisScript(UNSEED),
    addCredit: redisScript(ADD_CREDIT),
    claim: redisScript(CLAIM),
    draw: redisScript(DRAW),
  };

  const lateMessage = `spend store did not answer within ${timeoutMs} ms`;
  const within = <T>(promise: Promise<T>): Promise<T> => withTimeout(promise, timeoutMs, lateMessage);
  const run = (which: RedisScript, keys: string[], args: string[]): Promise<unknown> => within(which.run(redis, keys, args));

  /** Each account's counter key, and its limit ('' for a credit account) and expiry as the scripts read them. */
  const addAccounts = (keys: string[], args: string[], accounts: readonly SpendAccount[]) => {
    for (const account of accounts) {
      keys.push(prefix + account.key);
      args.push(account.limitNanos === null ? '' : String(account.limitNanos), String(account.expiresAt));
    }
  };

  async function sweepExpired(): Promise<number> {
    return Number(await run(scripts.sweep, [deadlines], [String(now()), holdPrefix, String(SWEEP_BATCH)]));
  }

  const interval = options.sweepIntervalMs ?? 30_000;
  const timer = interval > 0 ? setInterval(() => void sweepExpired().catch((error) => options.onError?.(error)), interval) : undefined;
  timer?.unref();

  return {
    async reserve(reservationId, accounts, amountNanos, ttlMs) {
      const deadline = now() + ttlMs;
      const keys = [holdPrefix + reservationId, deadlines];
      const args = [reservationId, String(amountNanos), String(deadline)];
      addAccounts(keys, args, accounts);
      const reply = (await run(scripts.reserve, keys, args)) as Array<number | string>;
      if (Number(reply[0]) === 1) return { ok: true };
      if (Number(reply[0]) === UNSEEDED) throw unseededError(reply, accounts);
      return { ok: false, index: Number(reply[1]), availableNanos: Math.max(0, Number(reply[2])) };
    },
    async settle(reservationId, accounts, actualNanos, options) {
      const keys = [holdPrefix + reservationId, deadlines];
      const args = [reservationId, String(actualNanos)];
      addAccounts(keys, args, accounts);
      args.push(options?.onlyIfHeld ? 'held' : 'any');
      // Nobody's answer waits for a settlement (the hold covers the account until it lands), so it
      // may wait a few ms to share the next admission write (lib/redis-turn-writes.ts).
      const reply = (await sendUnhurried(redis, () => run(scripts.settle, keys, args))) as Array<number | string>;
      return settledAccounts(reply, accounts.length);
    },
    async claim(holdId, accounts, minimumNanos, wantedNanos, share, ttlMs) {
      const deadline = now() + ttlMs;
      const keys = [holdPrefix + holdId, deadlines];
      const args = [holdId, String(minimumNanos), String(deadline), String(Math.max(minimumNanos, wantedNanos)), String(share)];
      addAccounts(keys, args, accounts);
      const reply = (await run(scripts.claim, keys, args)) as Array<number | string>;
      if (Number(reply[0]) === 1) return { ok: true, grantedNanos: Number(reply[1]) };
      if (Number(reply[0]) === UNSEEDED) throw unseededError(reply, accounts);
      return { ok: false, index: Number(reply[1]), availableNanos: Math.max(0, Number(reply[2])) };
    },
    async draw(holdId, drawId, accounts, heldNanos, actualNanos, options) {
      const keys = [holdPrefix + holdId, deadlines];
      const args = [drawId, String(heldNanos), String(actualNanos)];
      addAccounts(keys, args, accounts);
      args.push(options?.onlyIfHeld ? 'held' : 'any');
      // As a settlement: nobody's answer waits for it.
      const reply = (await sendUnhurried(redis, () => run(scripts.draw, keys, args))) as Array<number | string>;
      return settledAccounts(reply, accounts.length);
    },
    async release(reservationId) {
      await sendUnhurried(redis, () => run(scripts.release, [holdPrefix + reservationId, deadlines], [reservationId]));
    },
    async addCredit(accountKey, amountNanos) {
      const total = await run(scripts.addCredit, [prefix + accountKey], [String(amountNanos)]);
      if (total === null) throw new UnseededAccountsError([accountKey]);
      return Number(total);
    },
    async read(accountKey): Promise<AccountState> {
      const [spent, reserved, credited, seeded] = await within(redis.hmget(prefix + accountKey, 'spent', 'reserved', 'credited', 'seeded'));
      if (seeded === null) throw new UnseededAccountsError([accountKey]);
      return { spentNanos: Number(spent ?? 0), reservedNanos: Number(reserved ?? 0), creditedNanos: Number(credited ?? 0) };
    },
    async seed(account, state) {
      await run(scripts.seed, [prefix + account.key], [String(state.spentNanos), String(state.creditedNanos ?? 0), String(account.expiresAt)]);
    },
    async unseed(accountKeys) {
      if (accountKeys.length > 0) await run(scripts.unseed, accountKeys.map((key) => prefix + key), []);
    },
    async claimOnce(marker, ttlMs) {
      const reply = await within(redis.set(`${prefix}once:${marker}`, '1', 'PX', ttlMs, 'NX'));
      return reply === 'OK';
    },
    sweepExpired,
    async close() {
      if (timer) clearInterval(timer);
    },
  };
}
