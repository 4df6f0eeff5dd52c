import type { Redis } from 'ioredis';

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
      await publisher.publish(CHANNEL, JSON.stringify(notice));
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
