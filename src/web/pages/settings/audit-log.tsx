/**
 * `/<project>/~settings/audit-log`: the project's audit log for its administrators
 * (docs/audit-log.md#page-and-api) — the rows of the project, filtered and paged as on the
 * administration page.
 */
import { projectAuditEvents } from '../../../domain/projects/index.js';
import { BadRequest } from '../../../errors.js';
import { AuditLog, auditQueryOf } from '../../components/audit-log.js';
import type { PageResult, ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { SettingsLayout, settingsUrl } from './shared.js';

async function show(page: ProjectPageContext): Promise<PageResult> {
  let rows: Awaited<ReturnType<typeof projectAuditEvents>> = [];
  let error: string | null = null;
  try {
    const { filter, page: range } = auditQueryOf(page.query);
    rows = await projectAuditEvents(page.ctx, page.project.id, filter, range);
  } catch (e) {
    if (!(e instanceof BadRequest)) throw e;
    error = e.message;
  }
  return (
    <SettingsLayout page={page} section="audit-log" error={error}>
      <AuditLog action={settingsUrl(page, 'audit-log')} query={page.query} rows={rows} />
    </SettingsLayout>
  );
}

export const auditLogSettingsPages: ProjectPageRoute[] = [{ method: 'GET', path: '/~settings/audit-log', handler: show }];
