import type { AuditEventRow } from '../../db/schema.js';
import { readAuditEvents, type AuditFilter, type AuditPage } from '../audit/index.js';
import type { Context } from '../context.js';
import { loadProjectWith } from './permissions.js';

/**
 * A project's audit log (docs/audit-log.md#page-and-api): the rows of `filter` whose project is
 * `projectId`, newest first, one `page`. For the project's administrators (manage permission):
 * NotFound when the caller may not see the project, Forbidden (401 anonymous) without manage.
 */
export async function projectAuditEvents(ctx: Context, projectId: number, filter: Omit<AuditFilter, 'projectId'>, page: AuditPage): Promise<AuditEventRow[]> {
  await loadProjectWith(ctx, projectId, 'manage');
  return readAuditEvents(ctx.db, { ...filter, projectId }, page);
}
