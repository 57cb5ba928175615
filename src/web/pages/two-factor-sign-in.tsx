/**
 * `/~login/two-factor`: the second step of a sign-in (docs/security.md#two-factor-authentication).
 * The sign-in page sends a user with a second factor here with the `gitloom_two_factor` cookie of
 * their pending sign-in; they answer with a code of their authenticator app, a recovery code, or
 * a security key (src/web/assets/two-factor.js), and only then does the session start. A refusal
 * is shown with the API's status and message (401, 429 with `Retry-After`).
 */
import { completeSecondStep, pendingSignIn, type PendingSignIn, type SecondFactorAnswer, startWebSession } from '../../domain/auth/index.js';
import { GitloomError, TooManyRequests, Unauthorized } from '../../errors.js';
import { assetUrl } from '../assets.js';
import { Flash } from '../components/flash.js';
import { Field, HiddenFields, PostForm } from '../components/forms.js';
import { Layout } from '../components/layout.js';
import { redirect, safeRedirect, type PageContext, type PageModule, type PageResult } from '../page.js';
import { requestClient } from '../../plugins/auth.js';
import { clearSecondStepCookie, SECOND_STEP_COOKIE, setSessionCookie, signedCookie } from '../session.js';

function SecondStepPage({ page, pending, error }: { page: PageContext; pending: PendingSignIn | null; error?: string }) {
  const action = `/~login/two-factor?${new URLSearchParams({ redirect: safeRedirect(page.query.redirect) })}`;
  return (
    <Layout page={page} title="Two-factor authentication" scripts={pending?.securityKey ? ['two-factor.js'] : []}>
      <section class="narrow">
        <h1>Two-factor authentication</h1>
        <Flash error={error} />
        {pending === null ? (
          <p>
            <a href={`/~login?${new URLSearchParams({ redirect: safeRedirect(page.query.redirect) })}`}>Sign in again</a>
          </p>
        ) : (
          <>
            <p>{`Signing in as ${pending.name}.`}</p>
            {pending.securityKey && (
              <form
                method="post"
                action={action}
                aria-label="Use a security key"
                data-webauthn="authenticate"
                data-library={assetUrl('webauthn.js')}
                data-options={JSON.stringify(pending.securityKey)}
              >
                <HiddenFields fields={{ _csrf: page.csrfToken, response: '' }} />
                <p>
                  <button type="submit" class="primary">
                    Use security key
                  </button>
                </p>
                <p role="status" class="meta" />
              </form>
            )}
            {pending.totp && (
              <PostForm page={page} action={action} label="Enter a code">
                <Field name="code" label="Code from your authenticator app" required autocomplete="one-time-code" autofocus={!pending.securityKey} />
                <p>
                  <button type="submit">Verify</button>
                </p>
              </PostForm>
            )}
            <details>
              <summary>Use a recovery code</summary>
              <PostForm page={page} action={action} label="Enter a recovery code">
                <Field name="recoveryCode" label="Recovery code" required autocomplete="off" />
                <p>
                  <button type="submit">Use recovery code</button>
                </p>
              </PostForm>
            </details>
          </>
        )}
      </section>
    </Layout>
  );
}

/** The answer a submitted form carries. */
function answerOf(form: Record<string, string>): SecondFactorAnswer {
  if (form.recoveryCode !== undefined) return { recoveryCode: form.recoveryCode };
  if (form.response !== undefined) return { securityKey: form.response };
  return { code: form.code ?? '' };
}

/** Shows a refusal on the page with its status (and `Retry-After`); the pending sign-in when it still waits. */
async function refused(page: PageContext, token: string | null, error: unknown): Promise<PageResult> {
  if (!(error instanceof GitloomError) || error.status >= 500) throw error;
  let pending: PendingSignIn | null = null;
  // a pending sign-in that ended (expired, too many wrong answers) is shown as gone
  if (token)
    pending = await pendingSignIn(page.ctx, token).catch((failure: unknown) => {
      if (failure instanceof Unauthorized) return null;
      throw failure;
    });
  if (pending === null) clearSecondStepCookie(page.request, page.reply);
  page.reply.code(error.status);
  if (error instanceof TooManyRequests) page.reply.header('Retry-After', String(error.retryAfter));
  return <SecondStepPage page={page} pending={pending} error={error.message} />;
}

export const twoFactorSignInPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~login/two-factor',
      access: 'public',
      handler: async (page) => {
        if (page.user) return redirect(safeRedirect(page.query.redirect));
        const token = signedCookie(page.request, SECOND_STEP_COOKIE);
        try {
          return <SecondStepPage page={page} pending={await pendingSignIn(page.ctx, token ?? '')} />;
        } catch (error) {
          return refused(page, null, error);
        }
      },
    },
    {
      method: 'POST',
      path: '/~login/two-factor',
      access: 'public',
      handler: async (page) => {
        const token = signedCookie(page.request, SECOND_STEP_COOKIE);
        try {
          const userId = await completeSecondStep(page.ctx, token ?? '', answerOf(page.form));
          const session = await startWebSession(page.ctx, userId, requestClient(page.request));
          clearSecondStepCookie(page.request, page.reply);
          setSessionCookie(page.request, page.reply, session.token, session.expireDate);
          return redirect(safeRedirect(page.query.redirect));
        } catch (error) {
          return refused(page, token, error);
        }
      },
    },
  ],
};
