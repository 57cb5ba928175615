import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';

/** Every migration, by sortable name. Frozen once released: add a new file, never edit one. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
};
