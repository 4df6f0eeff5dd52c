import type { Migration } from 'kysely';

/**
 * Migrations of feature folders, one line each, named "NNN-feature" so they sort after 001-core.
 */
export const FEATURE_MIGRATIONS: Record<string, Migration> = {};
