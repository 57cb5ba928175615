/**
 * `/~administration/users`: the users (searched like `GET /~api/users?term=`), a new user form,
 * and a user's page: profile (login name, full name), email addresses (added verified, primary
 * and git roles, removal), group memberships, access tokens (masked, revocable), a password reset,
 * a reset of the user's second factors (docs/security.md#two-factor-authentication) and deletion — through the domain functions of `/~api/users` (same rules and messages: reserved
 * or used names, root and self not deletable, …). Users cannot be disabled: the domain has no
 * such state.
 */
import { getGroup, userMemberships } from '../../../domain/access/index.js';
import { resetTwoFactor, twoFactorState } from '../../../domain/auth/index.js';
import {
  addEmailAddress,
  createUser,
  deleteAccessTokenById,
  deleteUser,
  type EmailAddress,
  getUser,
  listAccessTokens,
  listEmailAddresses,
  queryUsers,
  setPassword,
  updateUser,
} from '../../../domain/users/index.js';
import { DateTime } from '../../components/code.js';
import { emailAddressChange, EmailAddressList } from '../../components/email-addresses.js';
import { Field, PostForm, InlineForm } from '../../components/forms.js';
import { formId, idParam, settingsPost, settingsRoute, SettingsLayout, entryChange, DeleteSection } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';
import { Notice } from '../../components/flash.js';

const PAGE_SIZE = 50;

async function userList(page: PageContext): Promise<PageResult> {
  const term = page.query.term ?? '';
  const offset = Math.max(0, Number(page.query.offset) || 0);
  const rows = await queryUsers(page.ctx, term || undefined, offset, PAGE_SIZE + 1);
  const users = rows.slice(0, PAGE_SIZE);
  const more = (at: number) => `/~administration/users?${new URLSearchParams({ ...(term && { term }), offset: String(at) })}`;
  return (
    <SettingsLayout page={page} area="administration" section="users" title="Users">
      <p>
        <a class="button" href="/~administration/users/new">
          New user
        </a>
      </p>
      <form method="get" action="/~administration/users" class="query" role="search">
        <label for="field-term" class="visually-hidden">
          Search users
        </label>
        <input id="field-term" name="term" type="search" value={term} placeholder="Name, full name or email" />
        <button type="submit">Search</button>
      </form>
      {users.length === 0 ? (
        <p class="empty">No user found.</p>
      ) : (
        <ul class="list" aria-label="Users">
          {users.map((u) => (
            <li key={u.id}>
              <a href={`/~administration/users/${u.id}`}>{u.name}</a>
              {u.fullName && <span class="meta">{` ${u.fullName}`}</span>}
            </li>
          ))}
        </ul>
      )}
      <p class="pager">
        {offset > 0 && <a href={more(Math.max(0, offset - PAGE_SIZE))}>Previous</a>}
        {rows.length > PAGE_SIZE && <a href={more(offset + PAGE_SIZE)}>Next</a>}
      </p>
    </SettingsLayout>
  );
}

function NewUserPage({ page, error }: { page: PageContext; error?: string }) {
  const form = page.form;
  return (
    <SettingsLayout page={page} area="administration" section="users" title="New user" error={error}>
      <PostForm page={page} action="/~administration/users/new" class="settings-form" label="New user">
        <Field name="name" label="Login name" value={form.name} required autocomplete="off" />
        <Field name="fullName" label="Full name (optional)" value={form.fullName} autocomplete="off" />
        <Field name="emailAddress" label="Email address" type="email" value={form.emailAddress} required autocomplete="off" />
        <Field name="password" label="Password" type="password" required autocomplete="new-password" />
        <p>
          <button type="submit" class="primary">
            Create user
          </button>
        </p>
      </PostForm>
    </SettingsLayout>
  );
}

/** `fullName` of a form: blank clears it (null), as `"fullName": null` does in the API. */
const fullNameOf = (form: Record<string, string>) => (form.fullName ?? '').trim() || null;

/** The profile form of a user's page and the email address form: what was typed when refused, else the stored profile. */
function ProfileAndEmails({
  page,
  base,
  user,
  emails,
  error,
}: {
  page: PageContext;
  base: string;
  user: { name: string; fullName: string | null };
  emails: EmailAddress[];
  error: string | null;
}) {
  // a refused profile change shows what was typed; any other page the stored profile
  const profile = error && page.form.op === 'profile' ? page.form : { name: user.name, fullName: user.fullName ?? '' };
  return (
    <>
      <section aria-labelledby="profile-heading">
        <h2 id="profile-heading">Profile</h2>
        <PostForm page={page} action={base} class="settings-form" label="Profile">
          <input type="hidden" name="op" value="profile" />
          <Field name="name" label="Login name" value={profile.name} required autocomplete="off" />
          <Field name="fullName" label="Full name" value={profile.fullName} autocomplete="off" />
          <p>
            <button type="submit">Save profile</button>
          </p>
        </PostForm>
      </section>
      <section aria-labelledby="emails-heading">
        <h2 id="emails-heading">Email addresses</h2>
        <EmailAddressList page={page} base={base} emails={emails} />
        <PostForm page={page} action={`${base}/email-addresses`} class="settings-form" label="Add an email address">
          <Field
            name="value"
            label="New email address"
            type="email"
            value={error && page.form.op === 'email' ? page.form.value : undefined}
            required
            autocomplete="off"
          />
          <input type="hidden" name="op" value="email" />
          <p>
            <button type="submit">Add email address</button>
          </p>
        </PostForm>
      </section>
    </>
  );
}

/** A user's access tokens, masked, each with its revoke form. */
function AccessTokens({ page, base, tokens }: { page: PageContext; base: string; tokens: Awaited<ReturnType<typeof listAccessTokens>> }) {
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Access tokens</h2>
      {tokens.length === 0 ? (
        <p class="empty">No access token.</p>
      ) : (
        <ul class="list" aria-label="Access tokens">
          {tokens.map((t) => (
            <li key={t.id} class="row">
              <span>
                <code>{t.value}</code>
                {` ${t.description ?? ''}`}
                <span class="meta">
                  {' · created '}
                  <DateTime date={new Date(t.createDate)} />
                </span>
              </span>
              <InlineForm
                page={page}
                action={`${base}/access-tokens/delete`}
                label={`Revoke token ${t.value}`}
                fields={{ id: String(t.id) }}
                buttonClass="danger"
                buttonLabel={`Revoke access token ${t.description ?? t.value}`}
              >
                Revoke
              </InlineForm>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

async function userPage(page: PageContext, error: string | null = null, notice: string | null = null): Promise<PageResult> {
  const id = idParam(page, 'id');
  const user = await getUser(page.ctx, id);
  const [emails, memberships, tokens, twoFactor] = await Promise.all([
    listEmailAddresses(page.ctx, id),
    userMemberships(page.ctx, id),
    listAccessTokens(page.ctx, id),
    twoFactorState(page.ctx, id),
  ]);
  const groups = await Promise.all(memberships.map((m) => getGroup(page.ctx, m.groupId)));
  const base = `/~administration/users/${id}`;
  return (
    <SettingsLayout page={page} area="administration" section="users" title={`User ${user.name}`} error={error}>
      <Notice notice={notice} />
      <ProfileAndEmails page={page} base={base} user={user} emails={emails} error={error} />
      <section aria-labelledby="groups-heading">
        <h2 id="groups-heading">Groups</h2>
        {groups.length === 0 ? (
          <p class="empty">Not a member of any group.</p>
        ) : (
          <ul class="list">
            {groups.map((g) => (
              <li key={g.id}>
                <a href={`/~administration/groups/${g.id}`}>{g.name}</a>
              </li>
            ))}
          </ul>
        )}
      </section>
      <AccessTokens page={page} base={base} tokens={tokens} />
      <section aria-labelledby="password-heading">
        <h2 id="password-heading">Reset password</h2>
        <PostForm page={page} action={`${base}/password`} class="settings-form" label="Reset password">
          <Field name="password" label="New password" type="password" required autocomplete="new-password" />
          <p>
            <button type="submit">Set password</button>
          </p>
        </PostForm>
      </section>
      <section aria-labelledby="two-factor-heading">
        <h2 id="two-factor-heading">Two-factor authentication</h2>
        {twoFactor.totp || twoFactor.securityKeys.length > 0 ? (
          <>
            <p>{`On: ${[twoFactor.totp && 'authenticator app', twoFactor.securityKeys.length > 0 && `${twoFactor.securityKeys.length} security key(s)`].filter(Boolean).join(', ')}; ${twoFactor.recoveryCodesLeft} recovery codes left.`}</p>
            <PostForm page={page} action={`${base}/two-factor/reset`} label="Reset two-factor">
              <p>
                <button type="submit" class="danger">
                  Reset two-factor
                </button>
              </p>
            </PostForm>
          </>
        ) : (
          <p class="empty">Off.</p>
        )}
      </section>
      <DeleteSection page={page} action={`${base}/delete`} what="user" name={user.name}>
        <p class="meta">What the user wrote stays, credited to the unknown user; tokens, keys, memberships and authorizations go.</p>
      </DeleteSection>
    </SettingsLayout>
  );
}

export const userAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '', async () => redirect('/~administration/users')),
    settingsRoute('administration', 'GET', '/users', userList),
    settingsRoute('administration', 'GET', '/users/new', async (page) => <NewUserPage page={page} />),
    settingsPost(
      'administration',
      '/users/new',
      async (page) => {
        const { name = '', emailAddress = '', password = '' } = page.form;
        const id = await createUser(page.ctx, { name: name.trim(), emailAddress: emailAddress.trim(), password, fullName: fullNameOf(page.form) });
        return redirect(`/~administration/users/${id}`);
      },
      (page, message) => <NewUserPage page={page} error={message} />,
    ),
    settingsRoute('administration', 'GET', '/users/:id', (page) => userPage(page)),
    entryChange('users', '', (page, id) => updateUser(page.ctx, id, { name: (page.form.name ?? '').trim(), fullName: fullNameOf(page.form) }), userPage),
    settingsPost(
      'administration',
      '/users/:id/password',
      async (page) => {
        // ends the user's sessions (an administrator changing their own keeps this one)
        await setPassword(page.ctx, idParam(page, 'id'), page.form.password ?? '', page.request.webVisitor.sessionToken);
        return userPage(page, null, 'Password changed.');
      },
      (page, message) => userPage(page, message),
    ),
    entryChange('users', '/access-tokens/delete', (page, id) => deleteAccessTokenById(page.ctx, id, formId(page, 'token')), userPage),
    entryChange('users', '/email-addresses', (page, id) => addEmailAddress(page.ctx, id, page.form.value ?? ''), userPage),
    entryChange('users', '/email-addresses/:op', (page, id) => emailAddressChange(page, id), userPage),
    entryChange('users', '/two-factor/reset', (page, id) => resetTwoFactor(page.ctx, id), userPage),
    entryChange('users', '/delete', (page, id) => deleteUser(page.ctx, id), userPage, 'list'),
  ],
};
