/**
 * `/~my/two-factor`: the signed-in user's second factors (docs/security.md#two-factor-authentication)
 * — an authenticator app set up from a QR code (rendered on the server by `qrcode` as a `data:`
 * PNG, which the pages' Content-Security-Policy allows as an image) and confirmed with a current
 * code, security keys and passkeys registered through WebAuthn (src/web/assets/two-factor.js with
 * `@simplewebauthn/browser`, served from the site's assets), recovery codes shown once, and
 * turning it all off. Removing a key, regenerating the codes and turning it off ask for a current
 * code, a recovery code or the password.
 */
import {
  confirmTotp,
  disableTwoFactor,
  finishSecurityKeyRegistration,
  isPasswordOf,
  type PasswordCheck,
  regenerateRecoveryCodes,
  removeSecurityKey,
  startSecurityKeyRegistration,
  startTotpEnrolment,
  twoFactorState,
} from '../../../domain/auth/index.js';
import { assetUrl } from '../../assets.js';
import { DateTime } from '../../components/code.js';
import { Notice } from '../../components/flash.js';
import { Field, HiddenFields, PostForm } from '../../components/forms.js';
import { formId, me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

/** The signed-in user's password check for the forms that accept it as proof. */
const passwordCheck =
  (page: PageContext): PasswordCheck =>
  (name, password) =>
    isPasswordOf(page.ctx, name, password);

/** A field asking for proof before a change: a current code, a recovery code or the password. */
function ProofField({ id }: { id: string }) {
  return <Field id={id} name="proof" label="Current code, recovery code or password" type="password" required autocomplete="current-password" />;
}

/** The recovery codes just made: shown once, never again. */
function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <section aria-labelledby="recovery-codes-heading" class="recovery-codes">
      <h2 id="recovery-codes-heading">Your recovery codes</h2>
      <p>Keep these somewhere safe: each signs you in once when you cannot use your second factor. They are shown only now.</p>
      <ul aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p>
        <a href="/~my/two-factor">Done</a>
      </p>
    </section>
  );
}

async function twoFactorPage(page: PageContext, error: string | null = null, notice: string | null = null, codes: string[] | null = null): Promise<PageResult> {
  const userId = me(page);
  const state = await twoFactorState(page.ctx, userId);
  const on = state.totp || state.securityKeys.length > 0;
  // the QR encoder loads on first use, as an enrolment begins
  const qr = state.pendingTotp && (await (await import('qrcode')).default.toDataURL(state.pendingTotp.uri, { margin: 2, width: 240 }));
  const registration = codes ? null : await startSecurityKeyRegistration(page.ctx);
  const mustEnrol = page.ctx.actor.mustEnrolSecondFactor === true;
  return (
    <SettingsLayout page={page} area="my" section="two-factor" title="Two-factor authentication" error={error} scripts={registration ? ['two-factor.js'] : []}>
      <Notice notice={notice} />
      {mustEnrol && <p class="notice">Two-factor authentication is required for your account: set up a second factor to continue.</p>}
      {codes ? (
        <RecoveryCodes codes={codes} />
      ) : (
        <>
          <p>{on ? 'Two-factor authentication is on.' : 'Two-factor authentication is off.'}</p>
          <section aria-labelledby="totp-heading">
            <h2 id="totp-heading">Authenticator app</h2>
            {state.totp ? (
              <p>Set up.</p>
            ) : state.pendingTotp ? (
              <>
                <p>Scan this code with your authenticator app, or enter the key by hand, then enter the code it shows.</p>
                <p>
                  <img class="totp-qr" src={qr ?? undefined} width={240} height={240} alt={`QR code of ${state.pendingTotp.uri}`} />
                </p>
                <p>
                  Key: <code aria-label="Setup key">{state.pendingTotp.secret}</code>
                </p>
                <PostForm page={page} action="/~my/two-factor/totp/confirm" class="settings-form" label="Confirm authenticator app">
                  <Field name="code" label="Code from the app" required autocomplete="one-time-code" />
                  <p>
                    <button type="submit" class="primary">
                      Confirm
                    </button>
                  </p>
                </PostForm>
              </>
            ) : (
              <PostForm page={page} action="/~my/two-factor/totp" label="Set up an authenticator app">
                <p>
                  <button type="submit">Set up an authenticator app</button>
                </p>
              </PostForm>
            )}
          </section>
          <section aria-labelledby="keys-heading">
            <h2 id="keys-heading">Security keys and passkeys</h2>
            {state.securityKeys.length === 0 ? (
              <p class="empty">No security key yet.</p>
            ) : (
              <ul class="list" aria-label="Security keys">
                {state.securityKeys.map((key) => (
                  <li key={key.id} class="row">
                    <span>
                      <strong>{key.name}</strong>
                      <span class="meta">
                        {' · added '}
                        <DateTime date={new Date(key.createDate)} />
                        {key.lastUsedDate !== null && (
                          <>
                            {' · last used '}
                            <DateTime date={new Date(key.lastUsedDate)} />
                          </>
                        )}
                      </span>
                    </span>
                    <PostForm page={page} action="/~my/two-factor/security-keys/delete" class="settings-form" label={`Remove security key ${key.name}`}>
                      <HiddenFields fields={{ id: String(key.id) }} />
                      <ProofField id={`proof-key-${key.id}`} />
                      <p>
                        <button type="submit" class="danger">{`Remove ${key.name}`}</button>
                      </p>
                    </PostForm>
                  </li>
                ))}
              </ul>
            )}
            {registration && (
              <form
                method="post"
                action="/~my/two-factor/security-keys"
                class="settings-form"
                aria-label="Add a security key"
                data-webauthn="register"
                data-library={assetUrl('webauthn.js')}
                data-options={JSON.stringify(registration)}
              >
                <HiddenFields fields={{ _csrf: page.csrfToken, response: '' }} />
                <Field name="name" label="Name of the security key" required />
                <p>
                  <button type="submit">Add security key</button>
                </p>
                <p role="status" class="meta" />
              </form>
            )}
          </section>
          {on && (
            <>
              <section aria-labelledby="codes-heading">
                <h2 id="codes-heading">Recovery codes</h2>
                <p>{`${state.recoveryCodesLeft} of 10 left.`}</p>
                <PostForm page={page} action="/~my/two-factor/recovery-codes" class="settings-form" label="Regenerate recovery codes">
                  <ProofField id="proof-codes" />
                  <p>
                    <button type="submit">Regenerate recovery codes</button>
                  </p>
                </PostForm>
              </section>
              <section aria-labelledby="disable-heading">
                <h2 id="disable-heading">Turn off</h2>
                <PostForm page={page} action="/~my/two-factor/disable" class="settings-form" label="Turn off two-factor authentication">
                  <ProofField id="proof-disable" />
                  <p>
                    <button type="submit" class="danger">
                      Turn off two-factor authentication
                    </button>
                  </p>
                </PostForm>
              </section>
            </>
          )}
        </>
      )}
    </SettingsLayout>
  );
}

/** A POST of this page: `change` may return recovery codes to show once; a refusal shows the page with its message. */
const post = (path: string, change: (page: PageContext) => Promise<string[] | null | void>, notice: string | null = null) =>
  settingsPost(
    'my',
    path,
    async (page) => {
      const codes = await change(page);
      return codes ? twoFactorPage(page, null, notice, codes) : redirect('/~my/two-factor');
    },
    (page, message) => twoFactorPage(page, message),
  );

export const twoFactorPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/two-factor', (page) => twoFactorPage(page)),
    post('/two-factor/totp', (page) => startTotpEnrolment(page.ctx)),
    post('/two-factor/totp/confirm', (page) => confirmTotp(page.ctx, page.form.code ?? ''), 'Authenticator app set up.'),
    post('/two-factor/security-keys', (page) => finishSecurityKeyRegistration(page.ctx, page.form.name ?? '', page.form.response ?? ''), 'Security key added.'),
    post('/two-factor/security-keys/delete', (page) => removeSecurityKey(page.ctx, formId(page, 'security key'), page.form.proof ?? '', passwordCheck(page))),
    post('/two-factor/recovery-codes', (page) => regenerateRecoveryCodes(page.ctx, page.form.proof ?? '', passwordCheck(page)), 'New recovery codes made.'),
    post('/two-factor/disable', (page) => disableTwoFactor(page.ctx, page.form.proof ?? '', passwordCheck(page))),
  ],
};
