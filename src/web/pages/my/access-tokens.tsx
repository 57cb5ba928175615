/**
 * `/~my/access-tokens`: the signed-in user's access tokens, listed masked (first 4 characters +
 * `…`, as `GET /~api/users/{id}/access-tokens`) with their limits and last use, a create form
 * (read-only, limited to projects) whose answer shows the new value once — it is stored hashed
 * and never shown again — and a delete button per token
 * (docs/compatibility.md#gitloom-differs-authentication, docs/compatibility.md#gitloom-differs-sessions-and-tokens).
 */
import { projectPathsByIds, visibleProjectIds } from '../../../domain/projects/index.js';
import { createAccessToken, deleteAccessTokenById, listAccessTokens } from '../../../domain/users/index.js';
import { BadRequest } from '../../../errors.js';
import { fromWireDate } from '../../../wire/dates.js';
import { DateTime } from '../../components/code.js';
import { Field, PostForm, InlineForm } from '../../components/forms.js';
import { Checkbox, TextArea } from '../../components/controls.js';
import { checked, formId, me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

/** Milliseconds in a day: a token expiring on a date works until that day ends (UTC). */
const DAY_MS = 86_400_000;

async function tokensPage(page: PageContext, created: string | null = null, error: string | null = null): Promise<PageResult> {
  const tokens = await listAccessTokens(page.ctx, me(page));
  const paths = await projectPathsByIds(
    page.ctx.db,
    tokens.flatMap((t) => t.projectIds ?? []),
  );
  const form = error ? page.form : {};
  const now = page.ctx.now();
  return (
    <SettingsLayout page={page} area="my" section="access-tokens" title="Access tokens" error={error}>
      {created && (
        <section class="flash notice new-token" role="status" aria-labelledby="new-token-heading">
          <h2 id="new-token-heading">Your new access token</h2>
          <p>Copy it now: it is shown only this once.</p>
          <p class="field">
            <label for="new-token">Access token</label>
            <input id="new-token" value={created} readOnly class="token-value" />
          </p>
          <p class="meta">
            Use it as <code>Authorization: Bearer …</code> with the API, or as the password with git and the sign-in form.
          </p>
        </section>
      )}
      {tokens.length === 0 ? (
        <p class="empty">No access token yet.</p>
      ) : (
        <ul class="list" aria-label="Access tokens">
          {tokens.map((t) => (
            <li key={t.id} class="row">
              <span>
                <code>{t.value}</code> {t.description ?? <span class="meta">(no description)</span>}
                <span class="meta">
                  {' · created '}
                  <DateTime date={new Date(t.createDate)} />
                  {t.expireDate !== null && (
                    <>
                      {t.expireDate <= now ? ' · expired ' : ' · expires '}
                      <DateTime date={new Date(t.expireDate)} />
                    </>
                  )}
                  {t.readOnly && ' · read-only'}
                  {t.projectIds &&
                    ` · only ${t.projectIds.length === 0 ? 'projects since deleted' : t.projectIds.map((id) => paths.get(id) ?? `#${id}`).join(', ')}`}
                  {t.lastUse ? (
                    <>
                      {' · last used '}
                      <DateTime date={new Date(t.lastUse.date)} />
                      {t.lastUse.address && ` from ${t.lastUse.address}`}
                    </>
                  ) : (
                    ' · never used'
                  )}
                </span>
              </span>
              <InlineForm
                page={page}
                action="/~my/access-tokens/delete"
                label={`Delete token ${t.value}`}
                fields={{ id: String(t.id) }}
                buttonClass="danger"
                buttonLabel={`Delete access token ${t.description ?? t.value}`}
              >
                Delete
              </InlineForm>
            </li>
          ))}
        </ul>
      )}
      <section aria-labelledby="create-token-heading">
        <h2 id="create-token-heading">New access token</h2>
        <PostForm page={page} action="/~my/access-tokens" class="settings-form" label="New access token">
          <Field name="description" label="Description (optional)" value={form.description} autocomplete="off" />
          <p class="field">
            <label for="field-expireDate">Expires on (optional, UTC)</label>
            <input id="field-expireDate" name="expireDate" type="date" value={form.expireDate ?? ''} />
          </p>
          <Checkbox name="readOnly" label="Read-only (reads, clones and fetches; changes nothing)" checked={checked(form, 'readOnly')} />
          <TextArea name="projects" label="Only these projects (paths, one per line; blank: all of yours)" value={form.projects} rows={3} />
          <p>
            <button type="submit" class="primary">
              Create token
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

async function createToken(page: PageContext): Promise<PageResult> {
  const description = (page.form.description ?? '').trim() || null;
  const date = (page.form.expireDate ?? '').trim();
  if (date && !/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new BadRequest(`Invalid date for 'expireDate': ${JSON.stringify(date)}`);
  const expireDate = date ? fromWireDate(date, 'expireDate') + DAY_MS - 1 : null;
  const projects = (page.form.projects ?? '')
    .split(/[\s,]+/)
    .map((path) => path.trim())
    .filter(Boolean);
  const projectIds = projects.length > 0 ? await visibleProjectIds(page.ctx, projects) : null;
  const value = await createAccessToken(page.ctx, me(page), { description, expireDate, readOnly: checked(page.form, 'readOnly'), projectIds });
  return tokensPage(page, value);
}

export const accessTokenPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/access-tokens', (page) => tokensPage(page)),
    settingsPost(
      'my',
      '/access-tokens',
      (page) => createToken(page),
      (page, message) => tokensPage(page, null, message),
    ),
    settingsPost(
      'my',
      '/access-tokens/delete',
      async (page) => {
        await deleteAccessTokenById(page.ctx, me(page), formId(page, 'token'));
        return redirect('/~my/access-tokens');
      },
      (page, message) => tokensPage(page, null, message),
    ),
  ],
};
