import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-access-control.js';
import * as m0003 from './0003-conversations.js';
import * as m0004 from './0004-pull-requests.js';
import * as m0005 from './0005-builds.js';
import * as m0006 from './0006-build-schedules.js';
import * as m0007 from './0007-pull-request-search.js';
import * as m0008 from './0008-references.js';
import * as m0009 from './0009-query-indexes.js';
import * as m0010 from './0010-issue-search.js';

/** Every migration, by sortable name. Frozen once released: add a new file, never edit one. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-access-control': m0002,
  '0003-conversations': m0003,
  '0004-pull-requests': m0004,
  '0005-builds': m0005,
  '0006-build-schedules': m0006,
  '0007-pull-request-search': m0007,
  '0008-references': m0008,
  '0009-query-indexes': m0009,
  '0010-issue-search': m0010,
};
