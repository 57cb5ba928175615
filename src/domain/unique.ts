import { Conflict } from '../errors.js';

/**
 * Whether a database error is a unique-constraint violation (PostgreSQL `23505`, SQLite
 * `SQLITE_CONSTRAINT_UNIQUE`/`SQLITE_CONSTRAINT_PRIMARYKEY`).
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * Whether a database error is a foreign-key violation (PostgreSQL `23503`, SQLite
 * `SQLITE_CONSTRAINT_FOREIGNKEY`): a referenced row was deleted by a concurrent writer.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * Runs a write whose uniqueness was pre-checked; a concurrent writer that won the race still
 * surfaces as 409 `message` (docs/compatibility.md#gitloom-differs-errors), never as a 500.
 */
export async function uniquely<T>(message: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(message, { cause: error });
    throw error;
  }
}
