import type { Redis } from 'ioredis';
import { redisScript } from './redis-script.js';

/**
 * Announces changes to cached state (a key revoked, an org's settings, the model catalog) so that
 * every instance drops its copy at once. In-process by default; Redis pub/sub with several instances.
 */
export type ChangeNotice =
  | { kind: 'key'; id: string }
  | { kind: 'org'; id: string }
  | { kind: 'team'; id: string }
  | { kind: 'catalog' }
  | { kind: 'pricing' }
  | { kind: 'all' };

export type ChangeListener = (notice: ChangeNotice) => void;

export interface ChangeFeed {
  publish(notice: ChangeNotice): Promise<void>;
  /**
   * Shared feeds only: a counter in the store that every publish bumps before its notice goes out.
   * A reader that sees it move knows something changed even if the notice has not reached it yet,
   * which is what makes "rejected on the next call once the change returned" exact across instances.
   */
  version?(): Promise<string>;
  /**
   * Shared feeds that confirm their version in the background (createRedisChangeFeed with
   * `freshnessMs`): the version as this instance last read it, when that read was sent less than
   * the feed's freshness ago; otherwise undefined, and the caller reads `version()` itself. A
   * publish returns only after the freshness has passed, so once a change is acknowledged no
   * instance still answers with the version before it (docs/deployment.md, "Revocation across
   * instances").
   */
  confirmedVersion?(): string | undefined;
  subscribe(listener: ChangeListener): () => void;
  close(): Promise<void>;
}

export function createLocalChangeFeed(): ChangeFeed {
  const listeners = new Set<ChangeListener>();
  return {
    async publish(notice) {
      for (const listener of listeners) listener(notice);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
    },
  };
}

const CHANNEL = 'gw:changes';
const VERSION_KEY = 'gw:changes:version';
// A script rather than a GET: when a call reads it itself (no fresh confirmation), it leaves in the
// call's one composite script with the rate-limit check and the credit hold (lib/redis-script-batch.ts).
const READ_VERSION = redisScript(`return redis.call('GET', KEYS[1])`);
// The new version rides in the notice, so an instance knows it before its next confirmation.
// The notice is JSON with one more field: readers that do not know it ignore it.
const PUBLISH_CHANGE = redisScript(`
local version = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], string.sub(ARGV[2], 1, -2) .. ',"version":"' .. version .. '"}')
return version
`);

export interface RedisChangeFeedOptions {
  /**
   * How long a version read stays trusted (default 0: not at all, every caller reads the version
   * itself). With a freshness F the feed reads the version every F / 4 ms in the background, and
   * every publish waits F (and a margin) after its version bump before it returns.
   */
  freshnessMs?: number;
  /** Monotonic ms (tests pass their own). */
  now?: () => number;
  /**
   * How long a version read may run ahead of the notices received before the feed concludes a
   * notice was lost and delivers `{kind:'all'}` (default 500 ms). A notice is normally only a
   * round trip behind the read that shows its version.
   */
  missedNoticeGraceMs?: number;
  /** Told of every failed attempt to send a notice; the feed keeps retrying it in the background. */
  onPublishError?: (error: unknown, notice: ChangeNotice, attempt: number) => void;
}

/** Background retries of a notice that could not be sent: from 100 ms, doubling, at most 5 s apart. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/** Waited beyond the freshness by a publish: timers fire late, and two machines' clocks run at slightly different rates. */
const FRESHNESS_MARGIN = 0.1;

/**
 * Redis pub/sub. `subscriber` must be a dedicated connection. When the subscription is lost and
 * re-established, listeners get `{kind:'all'}`: anything may have changed while we were deaf, so
 * caches start over instead of serving stale entries. The same happens when a version read shows
 * a change whose notice never came (a half-open subscriber socket reports no close). A notice that
 * cannot be sent (Redis away) makes the publish fail, and is sent again in the background until
 * Redis takes it, so every instance hears of a change that the database already holds.
 */
export function createRedisChangeFeed(publisher: Redis, subscriber: Redis, options: RedisChangeFeedOptions = {}): ChangeFeed {
  const freshnessMs = options.freshnessMs ?? 0;
  const missedNoticeGraceMs = options.missedNoticeGraceMs ?? 500;
  const now = options.now ?? (() => performance.now());
  const listeners = new Set<ChangeListener>();
  /** The highest version seen, and when the last read that confirmed it was sent. */
  let knownVersion = -1;
  let confirmedAt = -Infinity;
  const learn = (version: number, sentAt?: number) => {
    if (!Number.isSafeInteger(version) || version < knownVersion) return;
    knownVersion = version;
    // A read sent at `sentAt` shows every change made before that moment; a notice shows only its own.
    if (sentAt !== undefined && sentAt > confirmedAt) confirmedAt = sentAt;
  };
  const deliver = (notice: ChangeNotice) => {
    for (const listener of listeners) listener(notice);
  };

  /**
   * The highest version whose notice arrived (-1: none yet; the first read sets it, as caches start
   * empty). A read showing more means a notice is late or lost: if it is still missing after the
   * grace, everything is resynced.
   */
  let noticedVersion = -1;
  let missedCheck: NodeJS.Timeout | undefined;
  const noticeArrived = (version: number) => {
    if (Number.isSafeInteger(version) && version > noticedVersion) noticedVersion = version;
  };
  const versionRead = (version: number) => {
    if (!Number.isSafeInteger(version)) return;
    if (noticedVersion < 0) noticedVersion = version;
    if (version <= noticedVersion || missedCheck) return;
    missedCheck = setTimeout(() => {
      missedCheck = undefined;
      if (noticedVersion >= version) return;
      noticedVersion = version;
      deliver({ kind: 'all' });
    }, missedNoticeGraceMs);
    missedCheck.unref();
  };
  const readVersion = async (): Promise<string> => {
    const version = ((await READ_VERSION.run(publisher, [VERSION_KEY], [])) as string | null) ?? '0';
    versionRead(Number(version));
    return version;
  };
  const confirm = () => {
    const sentAt = now();
    readVersion().then(
      (version) => learn(Number(version), sentAt),
      () => {
        // Unconfirmed: once the freshness runs out, callers read the version themselves.
      },
    );
  };
  const confirmer = freshnessMs > 0 ? setInterval(confirm, Math.max(1, freshnessMs / 4)) : undefined;
  confirmer?.unref();
  if (confirmer) confirm();
  let subscribedOnce = false;
  const subscribe = () =>
    subscriber.subscribe(CHANNEL).then(
      () => {
        if (subscribedOnce) {
          deliver({ kind: 'all' });
          // Everything before now is covered by that resync: the next read sets the baseline again.
          noticedVersion = -1;
        }
        subscribedOnce = true;
      },
      () => {},
    );
  subscriber.on('message', (channel: string, message: string) => {
    if (channel !== CHANNEL) return;
    try {
      const notice = JSON.parse(message) as ChangeNotice & { version?: string };
      deliver(notice);
      if (notice.version !== undefined) {
        learn(Number(notice.version));
        noticeArrived(Number(notice.version));
      }
    } catch {
      // A malformed notice is ignored; it cannot come from gw.
    }
  });
  subscriber.on('ready', () => void subscribe());
  // Until the subscription is back, nothing cached can be trusted to be current.
  subscriber.on('close', () => deliver({ kind: 'all' }));
  void subscribe();

  const send = (notice: ChangeNotice) => PUBLISH_CHANGE.run(publisher, [VERSION_KEY], [CHANNEL, JSON.stringify(notice)]);
  /** Notices not sent yet, by their JSON (one retry per distinct notice), with their failed attempts. */
  const unsent = new Map<string, { notice: ChangeNotice; attempts: number }>();
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;
  const scheduleRetry = () => {
    if (retryTimer || closed || unsent.size === 0) return;
    const attempts = Math.max(...[...unsent.values()].map((entry) => entry.attempts));
    retryTimer = setTimeout(() => void retryUnsent(), Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (attempts - 1)));
    retryTimer.unref();
  };
  const retryUnsent = async () => {
    for (const [id, entry] of unsent) {
      try {
        await send(entry.notice);
        unsent.delete(id);
      } catch (error) {
        entry.attempts += 1;
        options.onPublishError?.(error, entry.notice, entry.attempts);
      }
    }
    retryTimer = undefined;
    scheduleRetry();
  };
  const sendOrRetryLater = async (notice: ChangeNotice) => {
    const id = JSON.stringify(notice);
    try {
      await send(notice);
      // Sent now (an admin repeating the change): no need to send it again later.
      unsent.delete(id);
    } catch (error) {
      const entry = unsent.get(id) ?? { notice, attempts: 0 };
      entry.attempts += 1;
      unsent.set(id, entry);
      options.onPublishError?.(error, notice, entry.attempts);
      scheduleRetry();
      throw error;
    }
  };

  return {
    async publish(notice) {
      // The publishing instance applies the change locally at once, whatever Redis does.
      deliver(notice);
      // One script: whoever reads the new version can also rely on the notice having been sent.
      // On failure the caller learns it, and the notice goes out in the background once Redis is back.
      await sendOrRetryLater(notice);
      // Every instance that trusted the older version read it less than the freshness before the
      // bump: once the freshness has passed, none does any more.
      if (freshnessMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(freshnessMs * (1 + FRESHNESS_MARGIN))));
    },
    version: readVersion,
    confirmedVersion() {
      if (knownVersion < 0 || now() - confirmedAt >= freshnessMs) return undefined;
      return String(knownVersion);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      if (confirmer) clearInterval(confirmer);
      if (retryTimer) clearTimeout(retryTimer);
      if (missedCheck) clearTimeout(missedCheck);
      listeners.clear();
      subscriber.disconnect();
    },
  };
}
