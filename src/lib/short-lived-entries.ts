/** What a removed entry holds until the next rebuild. */
const REMOVED: unique symbol = Symbol('removed');

/** The fewest removed entries that trigger a rebuild; more when more entries are live (amortized O(1) a removal). */
const MIN_REMOVED_BEFORE_REBUILD = 32;

/**
 * A map for entries that come and go with every call (a credit hold per request), kept by a
 * long-lived owner. A plain Map used that way makes old-generation garbage on every call: V8
 * reallocates a Map's table when a removal leaves it under a quarter full (a map that goes from
 * one entry to none does so on every call) and when additions reach its capacity, and it allocates
 * the new table in the generation of the old one, so once the table has been promoted (the map
 * sat idle for two young collections) each of those tables is born old and waits for a full
 * collection. Here a removal marks its entry instead, which changes the table in place, and after
 * enough removals the live entries move to a new Map, whose table is young again: its growth
 * tables die young when calls are frequent. `node bench/allocation-profile.mjs --survivors`
 * counts what outlives the nursery per call (docs/deployment.md, "Latency tail").
 */
export class ShortLivedEntries<K, V> {
  private entries = new Map<K, V | typeof REMOVED>();
  private removed = 0;

  /** Entries present, not counting removed ones. */
  get size(): number {
    return this.entries.size - this.removed;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    return value === REMOVED ? undefined : value;
  }

  set(key: K, value: V): this {
    if (this.entries.get(key) === REMOVED) this.removed--;
    this.entries.set(key, value);
    return this;
  }

  /** Removes the entry; false when there was none. */
  delete(key: K): boolean {
    const value = this.entries.get(key);
    if (value === undefined || value === REMOVED) return false;
    this.entries.set(key, REMOVED);
    this.removed++;
    if (this.removed >= MIN_REMOVED_BEFORE_REBUILD && this.removed >= this.size) this.rebuild();
    return true;
  }

  /** The entries present, in the order they were first added; a snapshot, so removing while iterating is safe. */
  list(): Array<[K, V]> {
    const present: Array<[K, V]> = [];
    for (const [key, value] of this.entries) if (value !== REMOVED) present.push([key, value]);
    return present;
  }

  private rebuild(): void {
    const live = new Map<K, V | typeof REMOVED>();
    for (const [key, value] of this.entries) if (value !== REMOVED) live.set(key, value);
    this.entries = live;
    this.removed = 0;
  }
}
