/** Reads a field that an API may spell in snake_case or camelCase (pages built ahead of their endpoints). */
export function pick<T = unknown>(row: Record<string, unknown>, ...names: string[]): T | undefined {
  for (const name of names) if (row[name] !== undefined && row[name] !== null) return row[name] as T;
  return undefined;
}

/** Any value as short display text. */
export function show(value: unknown): string {
  if (value === undefined || value === null || value === '') return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A list response's rows, whether wrapped in {data} or returned bare. */
export function rowsOf(body: unknown): Record<string, unknown>[] {
  if (Array.isArray(body)) return body as Record<string, unknown>[];
  const object = body as { data?: unknown; items?: unknown } | undefined;
  if (Array.isArray(object?.data)) return object.data as Record<string, unknown>[];
  if (Array.isArray(object?.items)) return object.items as Record<string, unknown>[];
  return [];
}
