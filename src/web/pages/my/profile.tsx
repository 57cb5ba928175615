/**
 * `/~my` and `/~my/profile` (the signed-in user's login name, full name and email addresses: the
 * primary and git roles chosen among the verified ones, any but the primary removed) and
 * `/~my/password` (a new password, after the current one is checked like a sign-in: same
 * failure limits; the user's other sessions end) — through the domain functions of
 * `/~api/users/{id}`.
 */
import { isPasswordOf } from '../../../domain/auth/index.js';
import { getUser, listEmailAddresses, setPassword, updateUser } from '../../../domain/users/index.js';
import { BadRequest } from '../../../errors.js';
import { emailAddressChange, EmailAddressList } from '../../components/email-addresses.js';
import { Field, PostForm } from '../../components/forms.js';
import { me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';
import { Notice } from '../../components/flash.js';

async function profilePage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const [user, emails] = await Promise.all([getUser(page.ctx, me(page)), listEmailAddresses(page.ctx, me(page))]);
  const values = error ? page.form : { name: user.name, fullName: user.fullName ?? '' };
  return (
    <SettingsLayout page={page} area="my" section="profile" title="Profile" error={error}>
      <PostForm page={page} action="/~my/profile" class="settings-form" label="Profile">
        <Field name="name" label="Login name" value={values.name} required autocomplete="username" />
        <Field name="fullName" label="Full name" value={values.fullName} autocomplete="name" />
        <p>
          <button type="submit" class="primary">
            Save profile
          </button>
        </p>
      </PostForm>
      <section aria-labelledby="emails-heading">
        <h2 id="emails-heading">Email addresses</h2>
        <EmailAddressList page={page} base="/~my" emails={emails} />
        <p class="meta">New email addresses are added by an administrator.</p>
      </section>
    </SettingsLayout>
  );
}

function passwordPage(page: PageContext, error: string | null = null, notice: string | null = null): PageResult {
  return (
    <SettingsLayout page={page} area="my" section="password" title="Password" error={error}>
      <Notice notice={notice} />
      <PostForm page={page} action="/~my/password" class="settings-form" label="Change password">
        <Field name="current" label="Current password" type="password" required autocomplete="current-password" />
        <Field name="password" label="New password" type="password" required autocomplete="new-password" />
        <Field name="confirm" label="New password again" type="password" required autocomplete="new-password" />
        <p>
          <button type="submit" class="primary">
            Change password
          </button>
        </p>
      </PostForm>
    </SettingsLayout>
  );
}

async function changePassword(page: PageContext): Promise<PageResult> {
  const { current = '', password = '', confirm = '' } = page.form;
  if (password !== confirm) throw new BadRequest('The two new passwords differ');
  const user = await getUser(page.ctx, me(page));
  // a wrong current password is a refused form here, not a reason to sign in again
  if (!(await isPasswordOf(page.ctx, user.name, current))) throw new BadRequest('The current password is not right');
  // the session of this page stays signed in; every other one of the user ends
  await setPassword(page.ctx, user.id, password, page.request.webVisitor.sessionToken);
  return passwordPage(page, null, 'Password changed.');
}

export const profilePages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '', (page) => profilePage(page)),
    settingsRoute('my', 'GET', '/profile', (page) => profilePage(page)),
    settingsPost(
      'my',
      '/profile',
      async (page) => {
        await updateUser(page.ctx, me(page), { name: (page.form.name ?? '').trim(), fullName: (page.form.fullName ?? '').trim() || null });
        return redirect('/~my/profile');
      },
      (page, message) => profilePage(page, message),
    ),
    settingsPost(
      'my',
      '/email-addresses/:op',
      async (page) => {
        await emailAddressChange(page, me(page));
        return redirect('/~my/profile');
      },
      (page, message) => profilePage(page, message),
    ),
    settingsRoute('my', 'GET', '/password', async (page) => passwordPage(page)),
    settingsPost(
      'my',
      '/password',
      (page) => changePassword(page),
      (page, message) => passwordPage(page, message),
    ),
  ],
};
