/**
 * `/~administration/roles`: the roles, a new role form and a role's page with its privileges —
 * the fields of the API's Role (docs/compatibility.md#roles): project, pull request, code
 * comment, code, issue and build privileges, the editable issue fields and the job privileges
 * (one row each; a row with empty job names is dropped, a blank row adds one) — saved and
 * deleted through the domain functions of `/~api/roles`.
 */
import { createRole, deleteRole, getRole, queryRoles, type RoleData, updateRole } from '../../../domain/access/index.js';
import type { JobPrivilege } from '../../../domain/projects/index.js';
import { toWireRole } from '../../../wire/access.js';
import { Field, PostForm } from '../../components/forms.js';
import { Checkbox, Select } from '../../components/controls.js';
import { checked, idParam, settingsPost, settingsRoute, SettingsLayout, entryChange, DeleteSection } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

/** Most roles listed (the API's page size). */
const LIMIT = 100;

/** The boolean privileges of a role, in OneDev's order, with their labels. */
const FLAGS = [
  ['manageProject', 'Manage project (everything on the project and its children)'],
  ['createChildren', 'Create child projects'],
  ['managePullRequests', 'Manage pull requests'],
  ['manageCodeComments', 'Manage code comments'],
  ['manageIssues', 'Manage issues'],
  ['accessConfidentialIssues', 'Access confidential issues'],
  ['scheduleIssues', 'Schedule issues (milestones)'],
  ['manageBuilds', 'Manage builds'],
] as const;

type Flag = (typeof FLAGS)[number][0];

const CODE_PRIVILEGES = [
  { value: 'NONE', label: 'None' },
  { value: 'READ', label: 'Read' },
  { value: 'WRITE', label: 'Write' },
];
const FIELD_SETS = [
  { value: 'AllIssueFields', label: 'All fields' },
  { value: 'NoneIssueFields', label: 'No field' },
  { value: 'IncludeIssueFields', label: 'Only the fields listed' },
  { value: 'ExcludeIssueFields', label: 'All but the fields listed' },
];
const JOB_FLAGS = [
  ['manageJob', 'Manage job'],
  ['runJob', 'Run job'],
  ['accessLog', 'Access log'],
] as const;

/** A role as its form holds it: strings and booleans. */
interface RoleValues {
  name: string;
  flags: Record<Flag, boolean>;
  codePrivilege: string;
  fieldSet: string;
  fields: string;
  jobs: JobPrivilege[];
}

function fromRole(role: ReturnType<typeof toWireRole> | null): RoleValues {
  const fieldSet = (role?.editableIssueFields ?? { '@type': 'AllIssueFields' }) as Record<string, unknown>;
  const list = (fieldSet.includeFields ?? fieldSet.excludeFields ?? []) as string[];
  return {
    name: role?.name ?? '',
    flags: Object.fromEntries(FLAGS.map(([f]) => [f, role?.[f] ?? false])) as Record<Flag, boolean>,
    codePrivilege: role?.codePrivilege ?? 'NONE',
    fieldSet: String(fieldSet['@type']),
    fields: list.join(', '),
    jobs: (role?.jobPrivileges ?? []) as JobPrivilege[],
  };
}

function fromForm(form: Record<string, string>): RoleValues {
  const jobs: JobPrivilege[] = [];
  for (let i = 0; form[`job${i}.jobNames`] !== undefined; i++) {
    const jobNames = form[`job${i}.jobNames`].trim();
    if (!jobNames) continue;
    jobs.push({
      jobNames,
      manageJob: checked(form, `job${i}.manageJob`),
      runJob: checked(form, `job${i}.runJob`),
      accessLog: checked(form, `job${i}.accessLog`),
      accessibleReports: (form[`job${i}.accessibleReports`] ?? '').trim() || null,
    });
  }
  return {
    name: form.name ?? '',
    flags: Object.fromEntries(FLAGS.map(([f]) => [f, checked(form, f)])) as Record<Flag, boolean>,
    codePrivilege: form.codePrivilege ?? 'NONE',
    fieldSet: form.fieldSet ?? 'AllIssueFields',
    fields: form.fields ?? '',
    jobs,
  };
}

/** The Role JSON of a form's values (validated by the domain, like an API body). */
function roleData(values: RoleValues): RoleData {
  const list = values.fields
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  const listField = values.fieldSet === 'IncludeIssueFields' ? 'includeFields' : values.fieldSet === 'ExcludeIssueFields' ? 'excludeFields' : null;
  return {
    name: values.name.trim(),
    ...values.flags,
    codePrivilege: values.codePrivilege as RoleData['codePrivilege'],
    editableIssueFields: { '@type': values.fieldSet, ...(listField && { [listField]: list }) },
    jobPrivileges: values.jobs,
  };
}

function RoleForm({ page, action, values, submit }: { page: PageContext; action: string; values: RoleValues; submit: string }) {
  const jobs = [...values.jobs, { jobNames: '', manageJob: false, runJob: false, accessLog: false, accessibleReports: null }];
  return (
    <PostForm page={page} action={action} class="settings-form" label="Role">
      <Field name="name" label="Name" value={values.name} required autocomplete="off" />
      <fieldset>
        <legend>Privileges</legend>
        {FLAGS.map(([flag, label]) => (
          <Checkbox key={flag} name={flag} label={label} checked={values.flags[flag]} />
        ))}
        <Select name="codePrivilege" label="Code" value={values.codePrivilege} options={CODE_PRIVILEGES} />
      </fieldset>
      <fieldset>
        <legend>Editable issue fields</legend>
        <Select name="fieldSet" label="Issue fields the role may edit" value={values.fieldSet} options={FIELD_SETS} />
        <Field name="fields" label="Fields listed (comma-separated)" value={values.fields} autocomplete="off" />
      </fieldset>
      <fieldset>
        <legend>Job privileges</legend>
        <p class="meta">
          Job names are space-separated patterns (<code>*</code> and <code>?</code> wildcards, <code>-</code> excludes). Leave the names empty to drop a row.
        </p>
        {jobs.map((job, i) => (
          <div class="job-privilege" key={i} role="group" aria-label={job.jobNames ? `Job privilege ${job.jobNames}` : 'New job privilege'}>
            <Field
              name={`job${i}.jobNames`}
              id={`field-job${i}-names`}
              label={job.jobNames ? 'Job names' : 'Job names (new privilege)'}
              value={job.jobNames}
              autocomplete="off"
            />
            {JOB_FLAGS.map(([flag, label]) => (
              <Checkbox key={flag} name={`job${i}.${flag}`} id={`field-job${i}-${flag}`} label={label} checked={job[flag]} />
            ))}
            <Field
              name={`job${i}.accessibleReports`}
              id={`field-job${i}-reports`}
              label="Accessible reports (patterns, optional)"
              value={job.accessibleReports ?? ''}
              autocomplete="off"
            />
          </div>
        ))}
      </fieldset>
      <p>
        <button type="submit" class="primary">
          {submit}
        </button>
      </p>
    </PostForm>
  );
}

async function roleList(page: PageContext): Promise<PageResult> {
  const roles = await queryRoles(page.ctx, undefined, 0, LIMIT);
  return (
    <SettingsLayout page={page} area="administration" section="roles" title="Roles">
      <p>
        <a class="button" href="/~administration/roles/new">
          New role
        </a>
      </p>
      <ul class="list" aria-label="Roles">
        {roles.map((r) => (
          <li key={r.id}>
            <a href={`/~administration/roles/${r.id}`}>{r.name}</a>
          </li>
        ))}
      </ul>
    </SettingsLayout>
  );
}

function newRolePage(page: PageContext, error: string | null = null): PageResult {
  const values = error ? fromForm(page.form) : fromRole(null);
  return (
    <SettingsLayout page={page} area="administration" section="roles" title="New role" error={error}>
      <RoleForm page={page} action="/~administration/roles/new" values={values} submit="Create role" />
    </SettingsLayout>
  );
}

async function rolePage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const id = idParam(page, 'id');
  const role = toWireRole(await getRole(page.ctx, id));
  const values = error && page.form.op !== 'delete' ? fromForm(page.form) : fromRole(role);
  return (
    <SettingsLayout page={page} area="administration" section="roles" title={`Role ${role.name}`} error={error}>
      <RoleForm page={page} action={`/~administration/roles/${id}`} values={values} submit="Save role" />
      <DeleteSection page={page} action={`/~administration/roles/${id}/delete`} what="role" name={role.name} hidden={{ op: 'delete' }} />
    </SettingsLayout>
  );
}

export const roleAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/roles', roleList),
    settingsRoute('administration', 'GET', '/roles/new', async (page) => newRolePage(page)),
    settingsPost(
      'administration',
      '/roles/new',
      async (page) => {
        const id = await createRole(page.ctx, roleData(fromForm(page.form)));
        return redirect(`/~administration/roles/${id}`);
      },
      (page, message) => newRolePage(page, message),
    ),
    settingsRoute('administration', 'GET', '/roles/:id', (page) => rolePage(page)),
    entryChange('roles', '', (page, id) => updateRole(page.ctx, id, roleData(fromForm(page.form))), rolePage),
    entryChange('roles', '/delete', (page, id) => deleteRole(page.ctx, id), rolePage, 'list'),
  ],
};
