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
import * as m0014 from './0014-sign-in-failures.js';
import * as m0015 from './0015-web-sessions.js';
import * as m0016 from './0016-outbox.js';
import * as m0017 from './0017-ref-journal.js';
import * as m0018 from './0018-sign-in-failure-pruning.js';
import * as m0019 from './0019-lfs.js';
import * as m0020 from './0020-repository-mirrors.js';
import * as m0021 from './0021-diff-views.js';
import * as m0023 from './0023-notifications.js';
import * as m0024 from './0024-user-avatars.js';
import * as m0025 from './0025-code-search.js';
import * as m0026 from './0026-code-search-symbols.js';
import * as m0027 from './0027-build-agents.js';
import * as m0028 from './0028-server-processes.js';
import * as m0029 from './0029-audit-log.js';
import * as m0030 from './0030-two-factor.js';
import * as m0031 from './0031-external-identities.js';
import * as m0032 from './0032-token-scopes-and-session-use.js';
import * as m0033 from './0033-stored-job-caches.js';
import * as m0035 from './0035-repository-maintenance.js';

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
  '0014-sign-in-failures': m0014,
  '0015-web-sessions': m0015,
  '0016-outbox': m0016,
  '0017-ref-journal': m0017,
  '0018-sign-in-failure-pruning': m0018,
  '0019-lfs': m0019,
  '0020-repository-mirrors': m0020,
  '0021-diff-views': m0021,
  '0023-notifications': m0023,
  '0024-user-avatars': m0024,
  '0025-code-search': m0025,
  '0026-code-search-symbols': m0026,
  '0027-build-agents': m0027,
  '0028-server-processes': m0028,
  '0029-audit-log': m0029,
  '0030-two-factor': m0030,
  '0031-external-identities': m0031,
  '0032-token-scopes-and-session-use': m0032,
  '0033-stored-job-caches': m0033,
  '0035-repository-maintenance': m0035,
};
