import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-access-control.js';

/** Every migration, by sortable name. Frozen once released: add a new file, never edit one. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-access-control': m0002,
};
