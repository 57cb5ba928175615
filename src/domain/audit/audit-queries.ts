/**
 * Reading and pruning the audit log (docs/audit-log.md#page-and-api, docs/audit-log.md#export,
 * docs/audit-log.md#retention): the filters the pages and the API share, newest first, paged by
 * keyset over `(time, id)` or by offset, a batched walk for the export, and the deletion of rows
 * older than the retention.
 */
import type { Db } from '../../db/database.js';
import type { AuditEventRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { requireAdmin } from '../actor.js';
import type { Context } from '../context.js';

/** The filters of the audit log; each absent one matches every row. */
export interface AuditFilter {
  /** The actor's login name as recorded (`actorName`), compared ignoring case. */
  actor?: string;
  /** An action name (`user.update`), or every action of a target type with `<type>.*`. */
  action?: string;
  /** The target type (`user`, `accessToken`, …). */
  targetType?: string;
  /** Rows at or after this time, epoch ms. */
  since?: number;
  /** Rows before this time, epoch ms. */
  until?: number;
  /** Only the rows of this project (the project's audit page). */
  projectId?: number;
}

/** A position in the log, newest first: the rows strictly older than the row `(time, id)`. */
export interface AuditCursor {
  time: number;
  id: number;
}

/** A page of the log: rows `before` a cursor (keyset) or from `offset`, at most `count`. */
export interface AuditPage {
  before?: AuditCursor;
  offset?: number;
  count: number;
}

/** Longest text of a filter (names and actions are short). */
const MAX_FILTER_TEXT = 255;

function checkFilter(filter: AuditFilter): void {
  for (const field of ['actor', 'action', 'targetType'] as const) {
    const text = filter[field];
    if (text !== undefined && (text.length > MAX_FILTER_TEXT || text.includes('\0'))) {
      throw new BadRequest(`${field} must be at most ${MAX_FILTER_TEXT} characters, without NUL`);
    }
  }
}

function filtered(db: Db, filter: AuditFilter) {
  checkFilter(filter);
  let query = db.selectFrom('auditEvents');
  if (filter.actor) query = query.where((eb) => eb(eb.fn('lower', ['actorName']), '=', filter.actor!.toLowerCase()));
  if (filter.action?.endsWith('.*')) query = query.where('targetType', '=', filter.action.slice(0, -2));
  else if (filter.action) query = query.where('action', '=', filter.action);
  if (filter.targetType) query = query.where('targetType', '=', filter.targetType);
  if (filter.since !== undefined) query = query.where('time', '>=', filter.since);
  if (filter.until !== undefined) query = query.where('time', '<', filter.until);
  if (filter.projectId !== undefined) query = query.where('projectId', '=', filter.projectId);
  return query;
}

/**
 * The rows matching `filter`, newest first (by time, then id), one page of `page`; BadRequest
 * for a filter text over 255 characters or holding NUL. Checks no permission: {@link queryAuditEvents} (administrators) and the projects area's project audit
 * (project administrators) call it after their checks.
 */
export async function readAuditEvents(db: Db, filter: AuditFilter, page: AuditPage): Promise<AuditEventRow[]> {
  let query = filtered(db, filter).selectAll();
  const { before } = page;
  if (before) query = query.where((eb) => eb.or([eb('time', '<', before.time), eb.and([eb('time', '=', before.time), eb('id', '<', before.id)])]));
  query = query.orderBy('time', 'desc').orderBy('id', 'desc').limit(page.count);
  if (page.offset) query = query.offset(page.offset);
  return query.execute();
}

/** The audit log for administrators ({@link readAuditEvents}); Forbidden (401 anonymous) for others. */
export async function queryAuditEvents(ctx: Context, filter: AuditFilter, page: AuditPage): Promise<AuditEventRow[]> {
  requireAdmin(ctx.actor);
  return readAuditEvents(ctx.db, filter, page);
}

/** Rows read per query by {@link exportAuditEvents}. */
export const EXPORT_BATCH = 500;

/**
 * The export of the log for administrators (docs/audit-log.md#export): every row matching
 * `filter`, newest first, read from the database in batches of `batch` rows by keyset, so the
 * log is never held in memory whole. Checks the caller (Forbidden, 401 anonymous) and the filter
 * (BadRequest, as {@link readAuditEvents}) before the first row is read; yields one batch at a time.
 */
export async function exportAuditEvents(ctx: Context, filter: AuditFilter, batch = EXPORT_BATCH): Promise<AsyncGenerator<AuditEventRow[]>> {
  requireAdmin(ctx.actor);
  // refused before the answer starts
  checkFilter(filter);
  return (async function* () {
    let before: AuditCursor | undefined;
    for (;;) {
      const rows = await readAuditEvents(ctx.db, filter, { before, count: batch });
      if (rows.length > 0) yield rows;
      if (rows.length < batch) return;
      before = rows[rows.length - 1];
    }
  })();
}

/** Rows deleted per statement by {@link pruneAuditEvents}. */
const PRUNE_BATCH = 1000;

/**
 * Deletes the rows older than `before` (epoch ms), a thousand per statement so that no
 * statement holds the table long (docs/audit-log.md#retention). Returns how many went.
 */
export async function pruneAuditEvents(db: Db, before: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await db
      .deleteFrom('auditEvents')
      .where('id', 'in', (eb) => eb.selectFrom('auditEvents').select('id').where('time', '<', before).limit(PRUNE_BATCH))
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted += n;
    if (n < PRUNE_BATCH) return deleted;
  }
}
