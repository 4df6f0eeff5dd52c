/**
 * Tables owned by feature folders. Each feature declares its table types next to its code and adds
 * them here, so db/schema.ts stays the one place that lists every table.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface FeatureTables {}
