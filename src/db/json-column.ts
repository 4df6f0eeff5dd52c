/**
 * JSON columns are plain text on both SQLite and Postgres (migrations stay portable), so every store
 * writes and reads them through this pair rather than the database's JSON types.
 */
export function toJsonColumn(value: unknown): string {
  return JSON.stringify(value);
}

/** The stored text back as a value; the column's type is the caller's to state (the store wrote it). */
export function fromJsonColumn<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** For nullable columns: an absent value (undefined or null) is stored as SQL NULL. */
export function toNullableJsonColumn(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function fromNullableJsonColumn<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
