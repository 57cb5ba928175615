/**
 * `/~administration/audit-log`: the audit log for administrators (docs/audit-log.md#page-and-api)
 * — filtered by actor, action, target type and days, newest first, paged by keyset — and the
 * retention setting (docs/audit-log.md#retention), saved by `POST /~administration/audit-log`.
 */
import { queryAuditEvents } from '../../../domain/audit/index.js';
import { getAuditSetting, setAuditSetting } from '../../../domain/settings/index.js';
import { BadRequest } from '../../../errors.js';
import { AuditLog, auditQueryOf } from '../../components/audit-log.js';
import { Notice } from '../../components/flash.js';
import { Field, PostForm } from '../../components/forms.js';
import { settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import type { PageContext, PageModule, PageResult } from '../../page.js';

const BASE = '/~administration/audit-log';

async function auditLogPage(page: PageContext, notice: string | null = null, error: string | null = null): Promise<PageResult> {
  let rows: Awaited<ReturnType<typeof queryAuditEvents>> = [];
  let refusal = error;
  try {
    const { filter, page: range } = auditQueryOf(page.query);
    rows = await queryAuditEvents(page.ctx, filter, range);
  } catch (e) {
    if (!(e instanceof BadRequest)) throw e;
    refusal = e.message;
  }
  const setting = await getAuditSetting(page.ctx);
  const days = error ? (page.form.retentionDays ?? '') : String(setting.retentionDays ?? '');
  return (
    <SettingsLayout page={page} area="administration" section="audit-log" title="Audit log" error={refusal}>
      <Notice notice={notice} />
      <AuditLog action={BASE} query={page.query} rows={rows} />
      <section aria-labelledby="retention-heading">
        <h2 id="retention-heading">Retention</h2>
        <PostForm page={page} action={BASE} class="settings-form" label="Audit log retention">
          <Field name="retentionDays" label="Keep audit events for (days; empty or 0 keeps them for ever)" value={days} autocomplete="off" />
          <p>
            <button type="submit" class="primary">
              Save retention
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

async function saveRetention(page: PageContext): Promise<PageResult> {
  const text = (page.form.retentionDays ?? '').trim();
  if (text !== '' && !/^\d{1,9}$/.test(text)) throw new BadRequest(`Retention days must be a whole number: ${text}`);
  await setAuditSetting(page.ctx, { retentionDays: text === '' ? null : Number(text) });
  return auditLogPage(page, 'Retention saved.');
}

export const auditLogAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/audit-log', (page) => auditLogPage(page)),
    settingsPost(
      'administration',
      '/audit-log',
      (page) => saveRetention(page),
      (page, message) => auditLogPage(page, null, message),
    ),
  ],
};
