/**
 * `/~my/sessions`: the signed-in user's web sessions — this one marked — with when and from where
 * (address, browser) each was last used, a button ending each other one, and one ending all the
 * others (docs/compatibility.md#gitloom-differs-sessions-and-tokens). Access tokens and their last
 * use are on `/~my/access-tokens`.
 */
import { endSessionById, endUserSessions, listSessions } from '../../../domain/auth/index.js';
import { DateTime } from '../../components/code.js';
import { InlineForm } from '../../components/forms.js';
import { me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';
import { SESSION_COOKIE, signedCookie } from '../../session.js';

const currentToken = (page: PageContext) => signedCookie(page.request, SESSION_COOKIE);

async function sessionsPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const sessions = await listSessions(page.ctx, me(page), currentToken(page));
  return (
    <SettingsLayout page={page} area="my" section="sessions" title="Sessions" error={error}>
      <ul class="list" aria-label="Sessions">
        {sessions.map((s) => (
          <li key={s.id} class="row">
            <span>
              <strong>{s.lastUse?.userAgent ?? 'Unknown browser'}</strong>
              {s.current && <span class="badge"> this session</span>}
              <span class="meta">
                {s.lastUse && (
                  <>
                    {' · last used '}
                    <DateTime date={new Date(s.lastUse.date)} />
                    {s.lastUse.address && ` from ${s.lastUse.address}`}
                  </>
                )}
                {' · signed in '}
                <DateTime date={new Date(s.createDate)} />
                {' · expires '}
                <DateTime date={new Date(s.expireDate)} />
              </span>
            </span>
            {!s.current && (
              <InlineForm
                page={page}
                action="/~my/sessions/end"
                label={`End session ${s.id}`}
                fields={{ id: s.id }}
                buttonClass="danger"
                buttonLabel={`End the session last used from ${s.lastUse?.address ?? 'an unknown address'}`}
              >
                End
              </InlineForm>
            )}
          </li>
        ))}
      </ul>
      {sessions.some((s) => !s.current) && (
        <InlineForm page={page} action="/~my/sessions/end-others" label="End all other sessions" fields={{}} buttonClass="danger">
          End all other sessions
        </InlineForm>
      )}
    </SettingsLayout>
  );
}

export const sessionPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/sessions', (page) => sessionsPage(page)),
    settingsPost(
      'my',
      '/sessions/end',
      async (page) => {
        await endSessionById(page.ctx, me(page), page.form.id ?? '');
        return redirect('/~my/sessions');
      },
      (page, message) => sessionsPage(page, message),
    ),
    settingsPost(
      'my',
      '/sessions/end-others',
      async (page) => {
        await endUserSessions(page.ctx.db, me(page), currentToken(page));
        return redirect('/~my/sessions');
      },
      (page, message) => sessionsPage(page, message),
    ),
  ],
};
