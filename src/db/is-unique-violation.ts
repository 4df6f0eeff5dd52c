/** Whether a write failed on a unique index: SQLite says "UNIQUE constraint failed", Postgres reports SQLSTATE 23505. */
export function isUniqueViolation(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${(error as { code?: string }).code ?? ''}` : '';
  return /UNIQUE|23505|duplicate key/i.test(text);
}
