/**
 * `/~administration/security` (the security setting of `/~api/settings/security`: anonymous
 * access, sign-up, self-deregistration, two-factor enforcement, default login group, session and
 * token lifetimes) and
 * `/~administration/label-specs` (the label specs of `/~api/label-specs`: create, rename,
 * recolour, delete — refused while in use).
 */
import { queryGroups } from '../../../domain/access/index.js';
import { createLabelSpec, deleteLabelSpec, queryLabelSpecs, updateLabelSpec } from '../../../domain/projects/index.js';
import { requireAdmin } from '../../../domain/actor.js';
import { getSecuritySetting, type SecuritySetting, setSecuritySetting } from '../../../domain/settings/index.js';
import { BadRequest } from '../../../errors.js';
import { Field, PostForm, InlineForm } from '../../components/forms.js';
import { Checkbox, Select } from '../../components/controls.js';
import { formId, checked, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';
import { Notice } from '../../components/flash.js';

/** Most groups offered as default login group and label specs listed (the API's page size). */
const LIMIT = 100;

const SECURITY_FLAGS = [
  ['enableAnonymousAccess', 'Allow anonymous access (visitors who are not signed in may read what the default roles allow)'],
  ['enableSelfRegister', 'Allow sign-up (people may create their own account)'],
  ['enableSelfDeregister', 'Allow users to delete their own account'],
  ['enforce2FA', 'Enforce two-factor authentication for everybody'],
] as const;

async function securityPage(page: PageContext, notice: string | null = null, error: string | null = null): Promise<PageResult> {
  const [setting, groups] = await Promise.all([getSecuritySetting(page.ctx), queryGroups(page.ctx, undefined, 0, LIMIT)]);
  return (
    <SettingsLayout page={page} area="administration" section="security" title="Security" error={error}>
      <Notice notice={notice} />
      <PostForm page={page} action="/~administration/security" class="settings-form" label="Security setting">
        {SECURITY_FLAGS.map(([name, label]) => (
          <Checkbox key={name} name={name} label={label} checked={setting[name]} />
        ))}
        <Select
          name="defaultLoginGroupId"
          label="Default group of every signed-in user"
          value={String(setting.defaultLoginGroupId ?? '')}
          options={[{ value: '', label: 'None' }, ...groups.map((g) => ({ value: String(g.id), label: g.name }))]}
        />
        <Field name="sessionTimeoutDays" label="Days a web session lasts after sign-in" value={String(setting.sessionTimeoutDays)} />
        <Field
          name="maxTokenLifetimeDays"
          label="Days an access token may live at most (blank: no bound)"
          value={setting.maxTokenLifetimeDays === null ? '' : String(setting.maxTokenLifetimeDays)}
        />
        <p>
          <button type="submit" class="primary">
            Save security setting
          </button>
        </p>
      </PostForm>
    </SettingsLayout>
  );
}

/** A whole number of days from a form field, 1 to `max`; null when blank; BadRequest otherwise. */
function days(raw: string | undefined, name: string, max: number): number | null {
  const text = (raw ?? '').trim();
  if (text === '') return null;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) throw new BadRequest(`'${name}' must be a whole number of days from 1 to ${max}`);
  return value;
}

async function saveSecurity(page: PageContext): Promise<PageResult> {
  requireAdmin(page.ctx.actor);
  const raw = page.form.defaultLoginGroupId ?? '';
  const groups = await queryGroups(page.ctx, undefined, 0, LIMIT);
  if (raw !== '' && !groups.some((g) => String(g.id) === raw)) throw new BadRequest(`Group not found: ${raw}`);
  const setting: SecuritySetting = {
    enableAnonymousAccess: checked(page.form, 'enableAnonymousAccess'),
    enableSelfRegister: checked(page.form, 'enableSelfRegister'),
    enableSelfDeregister: checked(page.form, 'enableSelfDeregister'),
    enforce2FA: checked(page.form, 'enforce2FA'),
    defaultLoginGroupId: raw === '' ? null : Number(raw),
    sessionTimeoutDays: days(page.form.sessionTimeoutDays, 'sessionTimeoutDays', 3650) ?? 14,
    maxTokenLifetimeDays: days(page.form.maxTokenLifetimeDays, 'maxTokenLifetimeDays', 36500),
  };
  await setSecuritySetting(page.ctx, setting);
  return securityPage(page, 'Security setting saved.');
}

async function labelSpecsPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const specs = await queryLabelSpecs(page.ctx, undefined, 0, LIMIT);
  const form = error ? page.form : {};
  const failed = form.op === 'update' ? form.id : null;
  return (
    <SettingsLayout page={page} area="administration" section="label-specs" title="Labels" error={error}>
      {specs.length === 0 ? (
        <p class="empty">No label yet.</p>
      ) : (
        <ul class="list label-specs" aria-label="Labels">
          {specs.map((spec) => {
            const values = failed === String(spec.id) ? { name: form.name, color: form.color } : spec;
            return (
              <li key={spec.id} class="row">
                <PostForm page={page} action="/~administration/label-specs" class="inline-form" label={`Label ${spec.name}`}>
                  <input type="hidden" name="op" value="update" />
                  <input type="hidden" name="id" value={String(spec.id)} />
                  <Field name="name" id={`field-name-${spec.id}`} label={`Name of label ${spec.name}`} value={values.name} required autocomplete="off" />
                  <Field name="color" id={`field-color-${spec.id}`} label={`Color of label ${spec.name}`} value={values.color} required autocomplete="off" />
                  <p>
                    <button type="submit">Save</button>
                  </p>
                </PostForm>
                <InlineForm
                  page={page}
                  action="/~administration/label-specs"
                  label={`Delete label ${spec.name}`}
                  fields={{ op: 'delete', id: String(spec.id) }}
                  buttonClass="danger"
                  buttonLabel={`Delete label ${spec.name}`}
                >
                  Delete
                </InlineForm>
              </li>
            );
          })}
        </ul>
      )}
      <section aria-labelledby="new-label-heading">
        <h2 id="new-label-heading">New label</h2>
        <PostForm page={page} action="/~administration/label-specs" class="settings-form" label="New label">
          <input type="hidden" name="op" value="create" />
          <Field name="name" label="Name" value={form.op === 'create' ? form.name : undefined} required autocomplete="off" />
          <Field name="color" label="Color (#rrggbb)" value={form.op === 'create' ? form.color : '#0d87e9'} required autocomplete="off" />
          <p>
            <button type="submit" class="primary">
              Create label
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

async function changeLabelSpec(page: PageContext): Promise<PageResult> {
  const { op, name = '', color = '' } = page.form;
  if (op === 'create') {
    await createLabelSpec(page.ctx, { name, color: color.trim() });
  } else if (op === 'update' || op === 'delete') {
    const id = formId(page, 'label');
    if (op === 'update') await updateLabelSpec(page.ctx, id, { name, color: color.trim() });
    else await deleteLabelSpec(page.ctx, id);
  } else {
    throw new BadRequest(`Unknown operation: ${op ?? ''}`);
  }
  return redirect('/~administration/label-specs');
}

export const settingAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/security', (page) => securityPage(page)),
    settingsPost(
      'administration',
      '/security',
      (page) => saveSecurity(page),
      (page, message) => securityPage(page, null, message),
    ),
    settingsRoute('administration', 'GET', '/label-specs', (page) => labelSpecsPage(page)),
    settingsPost(
      'administration',
      '/label-specs',
      (page) => changeLabelSpec(page),
      (page, message) => labelSpecsPage(page, message),
    ),
  ],
};
