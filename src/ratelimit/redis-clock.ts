import type { Redis } from 'ioredis';

/**
 * Maps this process's clock onto the time a shared counter store reckons its windows in. Every
 * instance must number and weigh a window by one clock, or two instances whose clocks differ count
 * the same moment in different windows and together admit up to twice a limit (docs/rate-limits.md).
 */
export interface StoreClock {
  /** The store's time at the local instant `localMs` (of the clock callers pass to the store). */
  toStoreTime(localMs: number): number;
  close(): void;
}

/** The caller's time, as it is: for a store in this process, or tests at fixed instants. */
export const CALLER_CLOCK: StoreClock = { toStoreTime: (localMs) => localMs, close() {} };

export interface RedisClockOptions {
  redis: Redis;
  /** This process's clock: the one whose readings are passed to the store (Date.now by default). */
  now?: () => number;
  /** How often the offset is read again (default 15 s): local clocks drift and get stepped. */
  refreshMs?: number;
  /** Readings per calibration; the one with the shortest round trip wins (default 3). */
  samples?: number;
  onError?: (error: unknown) => void;
}

export interface RedisClock extends StoreClock {
  /** The offset in use: Redis time minus local time, in ms. */
  offsetMs(): number;
  /** Reads the offset again; settles when done (a failure keeps the offset in use). */
  calibrate(): Promise<void>;
  /** The first calibration, started on creation. */
  readonly ready: Promise<void>;
}

/**
 * Redis TIME as the shared clock, without a command on the hot path: the offset between Redis and
 * this process's clock is read at creation, on every reconnection and every `refreshMs`, and
 * added to each local reading. A reading is taken halfway through a TIME round trip, so its error
 * is at most half of it (the shortest of a few is kept): well under a millisecond on a LAN,
 * against skews of hundreds of ms between hosts. Until the first reading returns, the offset is 0.
 *
 * TIME inside the Lua scripts would also give one clock, but the instance needs the store's time
 * before it asks (allowances decide locally which window they are in), and the scripts would stop
 * being deterministic functions of their arguments.
 */
export function createRedisClock(options: RedisClockOptions): RedisClock {
  const { redis } = options;
  const now = options.now ?? Date.now;
  const samples = Math.max(1, options.samples ?? 3);
  const report = options.onError ?? (() => {});
  let offset = 0;
  let running: Promise<void> | undefined;

  async function readOffset(): Promise<number> {
    let best = { roundTripMs: Infinity, offsetMs: 0 };
    for (let sample = 0; sample < samples; sample++) {
      const before = now();
      const [seconds, micros] = (await redis.time()) as Array<number | string>;
      const after = now();
      const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
      if (after - before < best.roundTripMs) best = { roundTripMs: after - before, offsetMs: redisMs - (before + after) / 2 };
    }
    return Math.round(best.offsetMs);
  }

  function calibrate(): Promise<void> {
    running ??= readOffset()
      .then((read) => {
        offset = read;
      }, report)
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const onReady = () => void calibrate();
  redis.on('ready', onReady);
  const timer = setInterval(onReady, options.refreshMs ?? 15_000);
  timer.unref();
  const ready = calibrate();

  return {
    toStoreTime: (localMs) => localMs + offset,
    offsetMs: () => offset,
    calibrate,
    ready,
    close() {
      clearInterval(timer);
      redis.off('ready', onReady);
    },
  };
}
