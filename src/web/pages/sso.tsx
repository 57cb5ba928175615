/**
 * OpenID Connect sign-in pages (docs/security.md#openid-connect), at OneDev's paths:
 * `GET /~sso/initiate/<connector>` starts it (the state, nonce and PKCE verifier kept in a
 * signed cookie, then off to the provider) and `GET /~sso/callback/<connector>` finishes it — a
 * session for the user, or the sign-in page saying why not.
 */
import { startWebSession } from '../../domain/auth/index.js';
import { beginOidcSignIn, finishOidcSignIn, type PendingSignIn } from '../../domain/sso/index.js';
import { GitloomError } from '../../errors.js';
import { requestClient } from '../../plugins/auth.js';
import { rawResponse, redirect, safeRedirect, type PageContext, type PageModule } from '../page.js';
import { clearSsoCookie, setSessionCookie, setSsoCookie, ssoCookie } from '../session.js';
import { loginPage } from './login.js';

/** The sign-in page with a refusal's message and status (a 5xx one too: the provider did not answer). */
async function refusedPage(page: PageContext, error: unknown) {
  if (!(error instanceof GitloomError) || error.status === 500) throw error;
  page.reply.code(error.status);
  return loginPage(page, { error: error.message });
}

/** The sign-in a browser started: the cookie's value when it reads as one. */
function pendingOf(value: unknown): (PendingSignIn & { redirect: string }) | null {
  const v = value as Partial<PendingSignIn & { redirect: string }> | null;
  return v && typeof v.connector === 'string' && typeof v.state === 'string' && typeof v.nonce === 'string' && typeof v.codeVerifier === 'string'
    ? { connector: v.connector, state: v.state, nonce: v.nonce, codeVerifier: v.codeVerifier, redirect: safeRedirect(v.redirect) }
    : null;
}

export const ssoPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~sso/initiate/:connector',
      access: 'public',
      handler: async (page) => {
        try {
          const { authorizationUrl, pending } = await beginOidcSignIn(page.ctx, page.params.connector);
          setSsoCookie(page.request, page.reply, { ...pending, redirect: safeRedirect(page.query.redirect) });
          // the provider is another site: page redirects stay on this server, so this one is sent as is
          page.reply.code(302);
          return rawResponse('text/plain; charset=utf-8', '', { Location: authorizationUrl });
        } catch (error) {
          return refusedPage(page, error);
        }
      },
    },
    {
      method: 'GET',
      path: '/~sso/callback/:connector',
      access: 'public',
      handler: async (page) => {
        const pending = pendingOf(ssoCookie(page.request));
        // a response is used once: whatever happens, the started sign-in ends here
        clearSsoCookie(page.request, page.reply);
        try {
          const query = page.request.url.includes('?') ? page.request.url.slice(page.request.url.indexOf('?') + 1) : '';
          const user = await finishOidcSignIn(page.ctx, page.params.connector, query, pending);
          const { token, expireDate } = await startWebSession(page.ctx, user.id, requestClient(page.request));
          setSessionCookie(page.request, page.reply, token, expireDate);
          return redirect(pending?.redirect ?? '/');
        } catch (error) {
          return refusedPage(page, error);
        }
      },
    },
  ],
};
