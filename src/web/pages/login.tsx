/**
 * Sign-in and sign-out (docs/compatibility.md#gitloom-differs-web-ui): `/~login` checks the credentials with the API's
 * rules ({@link signInFirstStep}: login name or email + password, or an access token
 * pasted as the password) and starts a database session — or, for a password of a user with a
 * second factor, a pending sign-in answered at `/~login/two-factor` (src/web/pages/two-factor-sign-in.tsx);
 * `POST /~logout` ends it server-side.
 */
import { endSession, signInFirstStep, startSecondStep, startWebSession } from '../../domain/auth/index.js';
import { GitloomError, RetryLater, Unauthorized } from '../../errors.js';
import { requestClient } from '../../plugins/auth.js';
import { Field, PostForm } from '../components/forms.js';
import { Layout } from '../components/layout.js';
import { redirect, safeRedirect, type PageContext, type PageModule } from '../page.js';
import { clearSessionCookie, SESSION_COOKIE, setSecondStepCookie, setSessionCookie, signedCookie } from '../session.js';
import { Flash } from '../components/flash.js';
import { ssoButtons } from '../../domain/sso/index.js';
import { SsoButtons } from '../components/sso-buttons.js';

type SsoButton = Awaited<ReturnType<typeof ssoButtons>>[number];

function LoginPage({ page, name, error, connectors }: { page: PageContext; name?: string; error?: string; connectors: SsoButton[] }) {
  const target = safeRedirect(page.query.redirect);
  return (
    <Layout page={page} title="Sign in">
      <section class="narrow">
        <h1>Sign in to Gitloom</h1>
        <Flash error={error} />
        <PostForm page={page} action={`/~login?${new URLSearchParams({ redirect: target })}`} label="Sign in">
          <Field name="name" label="User name or email" value={name} required autocomplete="username" autofocus />
          <Field name="password" label="Password or access token" type="password" required autocomplete="current-password" />
          <p>
            <button type="submit">Sign in</button>
          </p>
        </PostForm>
        <SsoButtons connectors={connectors} redirect={target} />
      </section>
    </Layout>
  );
}

/**
 * The sign-in page with `error` shown (and the name tried kept), its single sign-on buttons read
 * (docs/security.md#openid-connect); the caller sets the status.
 */
export async function loginPage(page: PageContext, props: { name?: string; error?: string } = {}) {
  return <LoginPage page={page} {...props} connectors={await ssoButtons(page.ctx)} />;
}

export const loginPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~login',
      access: 'public',
      handler: async (page) => (page.user ? redirect(safeRedirect(page.query.redirect)) : loginPage(page)),
    },
    {
      method: 'POST',
      path: '/~login',
      access: 'public',
      handler: async (page) => {
        const name = (page.form.name ?? '').trim();
        const password = page.form.password ?? '';
        try {
          if (!password) throw new Unauthorized('Enter your password or an access token');
          const { userId, secondStep } = await signInFirstStep(page.ctx, name, password);
          if (secondStep) {
            setSecondStepCookie(page.request, page.reply, await startSecondStep(page.ctx, userId));
            return redirect(`/~login/two-factor?${new URLSearchParams({ redirect: safeRedirect(page.query.redirect) })}`);
          }
          const { token, expireDate } = await startWebSession(page.ctx, userId, requestClient(page.request));
          setSessionCookie(page.request, page.reply, token, expireDate);
          return redirect(safeRedirect(page.query.redirect));
        } catch (error) {
          // a directory that does not answer is a message on the page too (docs/security.md#ldap-authenticator)
          if (!(error instanceof GitloomError) || (error.status >= 500 && error.code !== 'GITLOOM_ERR_DIRECTORY_UNAVAILABLE')) throw error;
          // the status, `Retry-After` and message of the API's problem (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input)
          page.reply.code(error.status);
          if (error instanceof RetryLater) page.reply.header('Retry-After', String(error.retryAfter));
          return loginPage(page, { name, error: error.message });
        }
      },
    },
    {
      // a plain link to /~logout (OneDev's habit) asks before signing out: GET changes nothing
      method: 'GET',
      path: '/~logout',
      access: 'public',
      handler: async (page) =>
        !page.user ? (
          redirect('/~login')
        ) : (
          <Layout page={page} title="Sign out">
            <section class="narrow">
              <h1>Sign out</h1>
              <PostForm page={page} action="/~logout" label="Sign out">
                <p>
                  <button type="submit">{`Sign out ${page.user.name}`}</button>
                </p>
              </PostForm>
            </section>
          </Layout>
        ),
    },
    {
      method: 'POST',
      path: '/~logout',
      access: 'public',
      handler: async (page) => {
        const token = signedCookie(page.request, SESSION_COOKIE);
        if (token) await endSession(page.ctx.db, token);
        clearSessionCookie(page.request, page.reply);
        return redirect('/~login');
      },
    },
  ],
};
