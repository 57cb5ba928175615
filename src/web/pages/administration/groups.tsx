/**
 * `/~administration/groups`: the groups with a create form, and a group's page: its fields
 * (name, description, administrator, create root projects, enforce 2FA), its members (add by
 * login name, remove) and deletion — through the domain functions of `/~api/groups` and
 * `/~api/memberships`.
 */
import {
  createGroup,
  createMembership,
  deleteGroup,
  deleteMembership,
  getGroup,
  type GroupData,
  groupMemberships,
  queryGroups,
  updateGroup,
} from '../../../domain/access/index.js';
import { userIdByName } from '../../../domain/pulls/index.js';
import { getUser } from '../../../domain/users/index.js';
import { toWireGroup } from '../../../wire/access.js';
import { Field, PostForm, InlineForm } from '../../components/forms.js';
import { Checkbox, TextArea } from '../../components/controls.js';
import { checked, idParam, settingsPost, settingsRoute, SettingsLayout, entryChange, DeleteSection } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

/** Most groups listed (the API's page size). */
const LIMIT = 100;

/** The fields of a group as a form shows them. */
interface GroupValues {
  name: string;
  description: string;
  administrator: boolean;
  createRootProjects: boolean;
  enforce2FA: boolean;
}

function submitted(form: Record<string, string>): GroupValues {
  return {
    name: form.name ?? '',
    description: form.description ?? '',
    administrator: checked(form, 'administrator'),
    createRootProjects: checked(form, 'createRootProjects'),
    enforce2FA: checked(form, 'enforce2FA'),
  };
}

function groupData(values: GroupValues): GroupData {
  return { ...values, name: values.name.trim(), description: values.description.trim() || null };
}

function GroupFields({ values }: { values: GroupValues }) {
  return (
    <>
      <Field name="name" label="Name" value={values.name} required autocomplete="off" />
      <TextArea name="description" label="Description (optional)" value={values.description} />
      <Checkbox name="administrator" label="Members are administrators" checked={values.administrator} />
      <Checkbox name="createRootProjects" label="Members may create root projects" checked={values.createRootProjects} />
      <Checkbox name="enforce2FA" label="Members must use two-factor authentication" checked={values.enforce2FA} />
    </>
  );
}

async function groupList(page: PageContext, error: string | null = null): Promise<PageResult> {
  const groups = await queryGroups(page.ctx, undefined, 0, LIMIT);
  const values = error ? submitted(page.form) : submitted({});
  return (
    <SettingsLayout page={page} area="administration" section="groups" title="Groups" error={error}>
      {groups.length === 0 ? (
        <p class="empty">No group yet.</p>
      ) : (
        <ul class="list" aria-label="Groups">
          {groups.map((g) => (
            <li key={g.id}>
              <a href={`/~administration/groups/${g.id}`}>{g.name}</a>
              {g.administrator === 1 && <span class="badge">administrators</span>}
              {g.description && <span class="meta">{` ${g.description}`}</span>}
            </li>
          ))}
        </ul>
      )}
      <section aria-labelledby="new-group-heading">
        <h2 id="new-group-heading">New group</h2>
        <PostForm page={page} action="/~administration/groups" class="settings-form" label="New group">
          <GroupFields values={values} />
          <p>
            <button type="submit" class="primary">
              Create group
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

async function groupPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const id = idParam(page, 'id');
  const group = await getGroup(page.ctx, id);
  const memberships = await groupMemberships(page.ctx, id);
  const members = await Promise.all(memberships.map(async (m) => ({ membership: m.id, user: await getUser(page.ctx, m.userId) })));
  const base = `/~administration/groups/${id}`;
  const wire = toWireGroup(group);
  const values = error && page.form.op === 'group' ? submitted(page.form) : { ...wire, description: wire.description ?? '' };
  return (
    <SettingsLayout page={page} area="administration" section="groups" title={`Group ${group.name}`} error={error}>
      <PostForm page={page} action={base} class="settings-form" label="Group">
        <input type="hidden" name="op" value="group" />
        <GroupFields values={values} />
        <p>
          <button type="submit">Save group</button>
        </p>
      </PostForm>
      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        {members.length === 0 ? (
          <p class="empty">No member yet.</p>
        ) : (
          <ul class="list" aria-label="Members">
            {members.map(({ membership, user }) => (
              <li key={membership} class="row">
                <a href={`/~administration/users/${user.id}`}>{user.name}</a>
                <InlineForm
                  page={page}
                  action={`${base}/members/delete`}
                  label={`Remove ${user.name}`}
                  fields={{ membership: String(membership) }}
                  buttonClass="link"
                  buttonLabel={`Remove ${user.name} from the group`}
                >
                  Remove
                </InlineForm>
              </li>
            ))}
          </ul>
        )}
        <PostForm page={page} action={`${base}/members`} class="settings-form inline-form" label="Add member">
          <Field
            name="user"
            id="field-member"
            label="Add member (login name)"
            value={error && page.form.op === 'member' ? page.form.user : undefined}
            required
            autocomplete="off"
          />
          <input type="hidden" name="op" value="member" />
          <p>
            <button type="submit">Add member</button>
          </p>
        </PostForm>
      </section>
      <DeleteSection page={page} action={`${base}/delete`} what="group" name={group.name} />
    </SettingsLayout>
  );
}

export const groupAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/groups', (page) => groupList(page)),
    settingsPost(
      'administration',
      '/groups',
      async (page) => {
        const id = await createGroup(page.ctx, groupData(submitted(page.form)));
        return redirect(`/~administration/groups/${id}`);
      },
      (page, message) => groupList(page, message),
    ),
    settingsRoute('administration', 'GET', '/groups/:id', (page) => groupPage(page)),
    entryChange('groups', '', (page, id) => updateGroup(page.ctx, id, groupData(submitted(page.form))), groupPage),
    entryChange(
      'groups',
      '/members',
      async (page, groupId) => createMembership(page.ctx, { groupId, userId: await userIdByName(page.ctx, page.form.user ?? '') }),
      groupPage,
    ),
    entryChange(
      'groups',
      '/members/delete',
      async (page, groupId) => {
        const membership = Number(page.form.membership);
        const own = (await groupMemberships(page.ctx, groupId)).some((m) => m.id === membership);
        // a membership of another group is not this page's to remove
        if (own) await deleteMembership(page.ctx, membership);
      },
      groupPage,
    ),
    entryChange('groups', '/delete', (page, id) => deleteGroup(page.ctx, id), groupPage, 'list'),
  ],
};
