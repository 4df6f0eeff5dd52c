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
}

/** Waited beyond the freshness by a publish: timers fire late, and two machines' clocks run at slightly different rates. */
const FRESHNESS_MARGIN = 0.1;

/**
 * Redis pub/sub. `subscriber` must be a dedicated connection. When the subscription is lost and
 * re-established, listeners get `{kind:'all'}`: anything may have changed while we were deaf, so
 * caches start over instead of serving stale entries.
 */
export function createRedisChangeFeed(publisher: Redis, subscriber: Redis, options: RedisChangeFeedOptions = {}): ChangeFeed {
  const freshnessMs = options.freshnessMs ?? 0;
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
  const readVersion = async (): Promise<string> => ((await READ_VERSION.run(publisher, [VERSION_KEY], [])) as string | null) ?? '0';
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
  const deliver = (notice: ChangeNotice) => {
    for (const listener of listeners) listener(notice);
  };
  let subscribedOnce = false;
  const subscribe = () =>
    subscriber.subscribe(CHANNEL).then(
      () => {
        if (subscribedOnce) deliver({ kind: 'all' });
        subscribedOnce = true;
      },
      () => {},
    );
  subscriber.on('message', (channel: string, message: string) => {
    if (channel !== CHANNEL) return;
    try {
      const notice = JSON.parse(message) as ChangeNotice & { version?: string };
      deliver(notice);
      if (notice.version !== undefined) learn(Number(notice.version));
    } catch {
      // A malformed notice is ignored; it cannot come from gw.
    }
  });
  subscriber.on('ready', () => void subscribe());
  // Until the subscription is back, nothing cached can be trusted to be current.
  subscriber.on('close', () => deliver({ kind: 'all' }));
  void subscribe();
  return {
    async publish(notice) {
      // The publishing instance applies the change locally at once, whatever Redis does.
      deliver(notice);
      // One script: whoever reads the new version can also rely on the notice having been sent.
      await PUBLISH_CHANGE.run(publisher, [VERSION_KEY], [CHANNEL, JSON.stringify(notice)]);
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
      if (confirmer) clearInterval(confirmer);
      listeners.clear();
      subscriber.disconnect();
    },
  };
}
