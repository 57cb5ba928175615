/**
 * `/<project>/~settings/members`: the user authorizations of the project (add a user with a
 * role, change the role, remove) and, for administrators, its group authorizations — through the functions of the
 * API's `/user-authorizations` and `/group-authorizations` routes (docs/compatibility.md#authorizations).
 */
import {
  createGroupAuthorization,
  createUserAuthorization,
  deleteGroupAuthorization,
  deleteUserAuthorization,
  grantableRoles,
  groupIdByName,
  type MemberGrant,
  projectMembers,
  updateGroupAuthorization,
  updateUserAuthorization,
  userIdByName,
} from '../../../domain/projects/index.js';
import { BadRequest, NotFound } from '../../../errors.js';
import { Select } from '../../components/controls.js';
import { Field, PostForm, InlineForm } from '../../components/forms.js';
import type { ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { chosenId, FormName, formValues, SettingsLayout, settingsChange, settingsUrl } from './shared.js';

type Kind = 'user' | 'group';
const NOUN: Record<Kind, { one: string; title: string }> = { user: { one: 'user', title: 'Users' }, group: { one: 'group', title: 'Groups' } };

function Grants({
  page,
  kind,
  grants,
  roles,
  error,
}: {
  page: ProjectPageContext;
  kind: Kind;
  grants: MemberGrant[];
  roles: { id: number; name: string }[];
  error: string | null;
}) {
  const action = `${settingsUrl(page, 'members')}/${kind}s`;
  const values = formValues(page, error, `add-${kind}`, { name: '', roleId: '' });
  const noun = NOUN[kind];
  return (
    <section aria-labelledby={`${kind}s`}>
      <h2 id={`${kind}s`}>{noun.title}</h2>
      {grants.length === 0 ? (
        <p class="empty">{`No ${noun.one} authorized on this project.`}</p>
      ) : (
        <ul class="list" aria-label={`Authorized ${kind}s`}>
          {grants.map((g) => (
            <li key={g.id} class="settings-row">
              <span>
                <strong>{g.subjectName}</strong>
                {` · ${g.roleName}`}
              </span>
              <PostForm page={page} action={`${action}/role`} class="row-form" label={`Role of ${g.subjectName}`}>
                <input type="hidden" name="id" value={String(g.id)} />
                <Select
                  name="roleId"
                  id={`${kind}-${g.id}-role`}
                  label={`Role of ${g.subjectName}`}
                  value={String(g.roleId)}
                  options={roles.map((r) => ({ value: String(r.id), label: r.name }))}
                />
                <p>
                  <button type="submit">Change role</button>
                </p>
              </PostForm>
              <InlineForm
                page={page}
                action={`${action}/delete`}
                label={`Remove ${g.subjectName}`}
                fields={{ id: String(g.id) }}
                buttonClass="danger"
                buttonLabel={`Remove ${g.subjectName}`}
              >
                Remove
              </InlineForm>
            </li>
          ))}
        </ul>
      )}
      <PostForm page={page} action={action} label={`Add a ${noun.one}`} class="settings-form row-form">
        <FormName name={`add-${kind}`} />
        <Field name="name" id={`${kind}-name`} label={kind === 'user' ? 'User name' : 'Group name'} required value={values.name} />
        <Select
          name="roleId"
          id={`${kind}-role`}
          label="Role"
          value={values.roleId}
          required
          options={roles.map((r) => ({ value: String(r.id), label: r.name }))}
        />
        <p>
          <button type="submit">{`Add ${noun.one}`}</button>
        </p>
      </PostForm>
    </section>
  );
}

async function show(page: ProjectPageContext, error: string | null) {
  const [members, roles] = await Promise.all([projectMembers(page.ctx, page.project.id), grantableRoles(page.ctx, page.project.id)]);
  return (
    <SettingsLayout page={page} section="members" error={error}>
      <Grants page={page} kind="user" grants={members.users} roles={roles} error={error} />
      {members.groups && <Grants page={page} kind="group" grants={members.groups} roles={roles} error={error} />}
    </SettingsLayout>
  );
}

/** The role chosen in the form (BadRequest when none). */
function roleIdOf(page: ProjectPageContext): number {
  const id = chosenId(page, 'roleId', 'role');
  if (id === null) throw new BadRequest('Role is required');
  return id;
}

/** The authorization of this project named by the form's `id` (404 when it is another project's or none). */
async function grantOf(page: ProjectPageContext, kind: Kind): Promise<number> {
  const members = await projectMembers(page.ctx, page.project.id);
  const grant = (members[`${kind}s`] ?? []).find((g) => String(g.id) === page.form.id);
  if (!grant) throw new NotFound(`${kind === 'user' ? 'User' : 'Group'} authorization not found: ${page.form.id ?? ''}`);
  return grant.id;
}

/** What the forms of one kind of member do, through the API's authorization functions. */
const GRANTS: Record<
  Kind,
  {
    create(page: ProjectPageContext): Promise<unknown>;
    update(page: ProjectPageContext, id: number, roleId: number): Promise<void>;
    remove(page: ProjectPageContext, id: number): Promise<void>;
  }
> = {
  user: {
    create: async (page) =>
      createUserAuthorization(page.ctx, { projectId: page.project.id, userId: await userIdByName(page.ctx, page.form.name ?? ''), roleId: roleIdOf(page) }),
    update: (page, id, roleId) => updateUserAuthorization(page.ctx, id, { roleId }),
    remove: (page, id) => deleteUserAuthorization(page.ctx, id),
  },
  group: {
    create: async (page) =>
      createGroupAuthorization(page.ctx, { projectId: page.project.id, groupId: await groupIdByName(page.ctx, page.form.name ?? ''), roleId: roleIdOf(page) }),
    update: (page, id, roleId) => updateGroupAuthorization(page.ctx, id, { roleId }),
    remove: (page, id) => deleteGroupAuthorization(page.ctx, id),
  },
};

/** The add, remove and change-role forms of one kind of member: `/~settings/members/{users,groups}[/delete|/role]`. */
function grantRoutes(kind: Kind): ProjectPageRoute[] {
  const grants = GRANTS[kind];
  const change = (page: ProjectPageContext, apply: () => Promise<unknown>) => settingsChange(page, show, apply, settingsUrl(page, 'members'));
  const base = `/~settings/members/${kind}s`;
  return [
    { method: 'POST', path: base, access: 'user', handler: (page) => change(page, () => grants.create(page)) },
    { method: 'POST', path: `${base}/delete`, access: 'user', handler: (page) => change(page, async () => grants.remove(page, await grantOf(page, kind))) },
    {
      method: 'POST',
      path: `${base}/role`,
      access: 'user',
      handler: (page) => change(page, async () => grants.update(page, await grantOf(page, kind), roleIdOf(page))),
    },
  ];
}

/** `/~settings/members` and its add/remove forms for users and groups. */
export const memberSettingsPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~settings/members', handler: (page) => show(page, null) },
  ...grantRoutes('user'),
  ...grantRoutes('group'),
];
