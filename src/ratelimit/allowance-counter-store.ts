import { reportRejection } from '../lib/awaitable.js';
import type { CounterStore, HitResult, WindowLimit, WindowState } from './counter-store.js';

export interface AllowanceOptions {
  /**
   * An allowance is at most 1/share of a limit. A limit smaller than twice the share times the
   * call's amount gets none: every call is decided by the shared store, exactly.
   */
  share: number;
  /** False while the shared store cannot be reached: every call then goes to it (and is let through on its failure, as without allowances). */
  available?: () => boolean;
  /** Told of a failed return of unused room (the counters then expire as usual). */
  onError?: (error: unknown) => void;
}

/** This instance's claim on one limit's current fixed window. */
interface Allowance {
  window: number;
  windowMs: number;
  /** Units counted in the shared window for this instance, beyond the calls that claimed them. */
  granted: number;
  used: number;
  /** The shared window's room right after the claim (which counts the whole grant as used). */
  remainingAtClaim: number;
}

/**
 * Rate limits shared by several instances without a round trip on every call. When a call needs
 * the shared counters anyway, it also claims a slice of each limit's current window (1/share of
 * the limit) for this instance; the calls after it are counted against that slice here, at once,
 * until it runs out or the window ends. The shared counter counts the whole slice from the moment
 * it was claimed, so all instances together still never pass a limit; the price is that a slice
 * claimed and not used counts against the others until its window ends (at most 1/share of the
 * limit per instance; the unused part of a finished window is given back, which lowers the weight
 * it has in the next window). Near its limit (a claim refused) a limit gets no slices for the rest
 * of its window, and each call is decided by the shared store as before. Only allowed calls are
 * answered locally: every refusal comes from the shared store.
 */
/** Past this many limits with an allowance (keys × users × kinds), those of ended windows are dropped. */
const MAX_ALLOWANCES = 10_000;

export interface AllowanceCounterStore extends CounterStore {
  /** Drops every allowance (the connection to the shared store was lost, and it may come back without them). */
  forget(): void;
}

export function createAllowanceCounterStore(shared: CounterStore, options: AllowanceOptions): AllowanceCounterStore {
  const { share } = options;
  const available = options.available ?? (() => true);
  const report = options.onError ?? (() => {});
  const allowances = new Map<string, Allowance>();
  /** Limit key → the window in which a claim was refused. */
  const nearLimit = new Map<string, { window: number; windowMs: number }>();
  /** Limits with a claim on its way: the calls meanwhile go to the shared store with their own amount only. */
  const claiming = new Set<string>();

  // Windows here are the shared store's (its clock, not this process's): a slice is spent only in
  // the window the shared store counted it in.
  const storeTime = (localNow: number) => shared.storeTime?.(localNow) ?? localNow;
  const windowOf = (limit: WindowLimit, now: number) => Math.floor(now / limit.windowMs);
  const grantFor = (limit: WindowLimit, now: number): number => {
    if (claiming.has(limit.key)) return 0;
    const grant = Math.floor(limit.limit / share);
    if (grant < 2 * Math.max(1, limit.amount)) return 0;
    return nearLimit.get(limit.key)?.window === windowOf(limit, now) ? 0 : grant;
  };
  /** The allowance of `limit` in the window of `now`, if it can count `amount` more. */
  const covering = (limit: WindowLimit, now: number): Allowance | undefined => {
    const allowance = allowances.get(limit.key);
    if (allowance === undefined || allowance.window !== windowOf(limit, now)) return undefined;
    return allowance.granted - allowance.used >= limit.amount ? allowance : undefined;
  };
  const localState = (limit: WindowLimit, allowance: Allowance, now: number): WindowState => {
    const remaining = Math.max(0, allowance.remainingAtClaim + allowance.granted - allowance.used);
    // Room for another such call: admitted now. Without it only the shared store knows when; the
    // end of this window, when the slice ends, is the estimate (the next call asks the shared store).
    const resetMs = remaining >= Math.max(1, limit.amount) ? 0 : limit.windowMs - (now % limit.windowMs);
    return { limit: limit.limit, remaining, resetMs, retryAfterMs: 0 };
  };
  /**
   * Records a claim; the unused part of an allowance from an earlier window goes back to its window.
   * `now` is the store's time; `localNow` the caller's, of the same instant.
   */
  const record = (limit: WindowLimit, now: number, localNow: number, grant: number, remaining: number) => {
    const window = windowOf(limit, now);
    const previous = allowances.get(limit.key);
    if (previous !== undefined && previous.window === window) {
      previous.granted += grant;
      previous.remainingAtClaim = remaining;
      return;
    }
    if (previous !== undefined && previous.granted > previous.used) {
      // adjust() takes the caller's time: the middle of that window, back on the caller's clock.
      const windowMiddle = previous.window * limit.windowMs + limit.windowMs / 2 - (now - localNow);
      reportRejection(shared.adjust(limit.key, limit.windowMs, windowMiddle, previous.used - previous.granted), report);
    }
    if (allowances.size >= MAX_ALLOWANCES) forgetPastWindows(now);
    allowances.set(limit.key, { window, windowMs: limit.windowMs, granted: grant, used: 0, remainingAtClaim: remaining });
  };
  /** Drops allowances and refusals of windows that have ended (their room is not given back: it expires with them). */
  const forgetPastWindows = (now: number) => {
    for (const [key, allowance] of allowances) if (allowance.window < Math.floor(now / allowance.windowMs)) allowances.delete(key);
    for (const [key, refused] of nearLimit) if (refused.window < Math.floor(now / refused.windowMs)) nearLimit.delete(key);
  };

  return {
    hitFromAllowance(limits, localNow) {
      if (!available()) return undefined;
      const now = storeTime(localNow);
      const found: Allowance[] = [];
      for (const limit of limits) {
        const allowance = covering(limit, now);
        if (allowance === undefined) return undefined;
        found.push(allowance);
      }
      const states: WindowState[] = [];
      for (let index = 0; index < limits.length; index++) {
        found[index].used += limits[index].amount;
        states.push(localState(limits[index], found[index], now));
      }
      return { allowed: true, blockedIndex: -1, states };
    },

    async hit(limits, localNow): Promise<HitResult> {
      // The shared store converts `localNow` itself, in this same turn (its offset cannot change
      // in between), so both reckon the claim in one window.
      const now = storeTime(localNow);
      // Limits this instance still holds room for are counted here; the others go to the shared
      // store with a claim added to the call's own amount.
      const local = new Map<number, Allowance>();
      const asked: WindowLimit[] = [];
      const askedIndex: number[] = [];
      const grants: number[] = [];
      limits.forEach((limit, index) => {
        const allowance = covering(limit, now);
        if (allowance !== undefined) {
          // Taken now, before the wait: a call admitted meanwhile must not count on it too.
          allowance.used += limit.amount;
          local.set(index, allowance);
          return;
        }
        const grant = grantFor(limit, now);
        asked.push(grant > 0 ? { ...limit, amount: limit.amount + grant } : limit);
        askedIndex.push(index);
        grants.push(grant);
      });
      if (asked.length === 0) {
        const states = limits.map((limit, index) => localState(limit, local.get(index)!, now));
        return { allowed: true, blockedIndex: -1, states };
      }
      const claimed = grants.some((grant) => grant > 0);
      asked.forEach((limit, position) => grants[position] > 0 && claiming.add(limit.key));
      let result: HitResult;
      try {
        result = await shared.hit(asked, localNow);
      } catch (error) {
        for (const [index, allowance] of local) allowance.used -= limits[index].amount;
        throw error;
      } finally {
        asked.forEach((limit, position) => grants[position] > 0 && claiming.delete(limit.key));
      }
      if (!result.allowed && claimed) {
        // Refused with the claim: near the limit. Decided exactly, and no slices there this window.
        const blocked = asked[result.blockedIndex];
        if (blocked) {
          if (nearLimit.size >= MAX_ALLOWANCES) forgetPastWindows(now);
          nearLimit.set(blocked.key, { window: windowOf(blocked, now), windowMs: blocked.windowMs });
        }
        result = await shared.hit(
          askedIndex.map((index) => limits[index]),
          localNow,
        );
        for (let position = 0; position < grants.length; position++) grants[position] = 0;
      }
      const states: WindowState[] = new Array(limits.length);
      askedIndex.forEach((index, position) => {
        const state = result.states[position];
        if (result.allowed && grants[position] > 0) {
          record(limits[index], now, localNow, grants[position], state.remaining);
          // The claim counts as used in the shared window; this instance may still spend it.
          states[index] = { ...state, remaining: state.remaining + grants[position] };
        } else states[index] = state;
      });
      for (const [index, allowance] of local) {
        // A refused call gives back what it took.
        if (!result.allowed) allowance.used -= limits[index].amount;
        states[index] = localState(limits[index], allowance, now);
      }
      if (!result.allowed) return { allowed: false, blockedIndex: askedIndex[result.blockedIndex] ?? -1, states };
      return { allowed: true, blockedIndex: -1, states };
    },

    forget() {
      allowances.clear();
      nearLimit.clear();
    },
    adjust: (key, windowMs, atMs, delta) => shared.adjust(key, windowMs, atMs, delta),
    storeTime,
    close: () => shared.close(),
  };
}
