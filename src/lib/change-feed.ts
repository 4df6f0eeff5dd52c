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
   * which is what makes "rejected on the very next call" exact across instances.
   */
  version?(): Promise<string>;
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
// A script rather than a GET: read on every call, it then leaves in the call's one composite
// script with the rate-limit check and the credit hold (lib/redis-script-batch.ts).
const READ_VERSION = redisScript(`return redis.call('GET', KEYS[1])`);

/**
 * Redis pub/sub. `subscriber` must be a dedicated connection. When the subscription is lost and
 * re-established, listeners get `{kind:'all'}`: anything may have changed while we were deaf, so
 * caches start over instead of serving stale entries.
 */
export function createRedisChangeFeed(publisher: Redis, subscriber: Redis): ChangeFeed {
  const listeners = new Set<ChangeListener>();
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
      deliver(JSON.parse(message) as ChangeNotice);
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
      // One transaction: whoever reads the new version can also rely on the notice having been sent.
      const results = await publisher.multi().incr(VERSION_KEY).publish(CHANNEL, JSON.stringify(notice)).exec();
      const failed = results?.find(([error]) => error);
      if (failed) throw failed[0];
    },
    async version() {
      return ((await READ_VERSION.run(publisher, [VERSION_KEY], [])) as string | null) ?? '0';
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      subscriber.disconnect();
    },
  };
}
