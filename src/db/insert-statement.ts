const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * The SQLite INSERT for one batch shape, shared by both batch writers (main thread and writer
 * thread). Names are checked, not quoted blindly: they come from our own row objects, and a name
 * that is not a plain identifier means a bug, not input to escape.
 */
export function sqliteInsertSql(table: string, columns: readonly string[], ignoreConflicts: boolean): string {
  for (const name of [table, ...columns]) {
    if (!PLAIN_IDENTIFIER.test(name)) throw new Error(`not a plain identifier: ${name}`);
  }
  const names = columns.map((column) => `"${column}"`).join(', ');
  const placeholders = columns.map(() => '?').join(', ');
  return `INSERT ${ignoreConflicts ? 'OR IGNORE ' : ''}INTO "${table}" (${names}) VALUES (${placeholders})`;
}
