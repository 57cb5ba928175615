/**
 * `/<project>/~settings/mirrors`: the project's repository mirrors (docs/compatibility.md#repository-mirrors)
 * through the functions of the API's mirror routes — the pull mirror and the push mirrors, each
 * with the outcome of its syncs (last success, last error, next sync), its settings form and a
 * "Sync now" button. A password is write-only here: never shown back, replaced only when a new one
 * is typed, removed by its checkbox.
 */
import {
  createMirror,
  DEFAULT_INTERVAL_MINUTES,
  deleteMirror,
  listMirrors,
  MAX_INTERVAL_MINUTES,
  MIN_INTERVAL_MINUTES,
  type MirrorDirection,
  type MirrorInput,
  type MirrorView,
  syncMirrorNow,
  updateMirror,
} from '../../../domain/mirrors/index.js';
import { BadRequest } from '../../../errors.js';
import { DateTime } from '../../components/code.js';
import { Checkbox } from '../../components/controls.js';
import { Field, PostForm } from '../../components/forms.js';
import type { ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { checked, chosenId, FormName, formValues, optionalText, SaveButtons, SettingsLayout, settingsChange, settingsUrl } from './shared.js';

/** A mirror's form values; never its password. */
function valuesOf(mirror: MirrorView | null): Record<string, string> {
  return {
    url: mirror?.url ?? '',
    userName: mirror?.userName ?? '',
    intervalMinutes: String(mirror?.intervalMinutes ?? DEFAULT_INTERVAL_MINUTES),
    enabled: mirror === null || mirror.enabled ? 'on' : '',
  };
}

const when = (ms: number | null) => (ms === null ? <span class="meta">never</span> : <DateTime date={new Date(ms)} />);

function Status({ mirror }: { mirror: MirrorView }) {
  return (
    <dl class="mirror-status">
      <dt>Last success</dt>
      <dd>{when(mirror.lastSuccessDate)}</dd>
      <dt>Last attempt</dt>
      <dd>{mirror.syncing ? 'syncing now' : when(mirror.lastAttemptDate)}</dd>
      <dt>Next sync</dt>
      <dd>{!mirror.enabled ? 'disabled' : mirror.nextAttemptDate === null ? 'after the next change' : when(mirror.nextAttemptDate)}</dd>
      {mirror.lastError !== null && (
        <>
          <dt>Last error{mirror.failureCount > 1 ? ` (${mirror.failureCount} failures in a row)` : ''}</dt>
          <dd>
            <pre class="mirror-error">{mirror.lastError}</pre>
          </dd>
        </>
      )}
    </dl>
  );
}

function MirrorForm({
  page,
  direction,
  mirror,
  values,
}: {
  page: ProjectPageContext;
  direction: MirrorDirection;
  mirror: MirrorView | null;
  values: Record<string, string>;
}) {
  const key = mirror === null ? `new-${direction.toLowerCase()}` : String(mirror.id);
  const id = (name: string) => `mirror-${key}-${name}`;
  const add = direction === 'PULL' ? 'Add pull mirror' : 'Add push mirror';
  return (
    <PostForm page={page} action={settingsUrl(page, 'mirrors')} label={mirror === null ? add : `Mirror ${mirror.url}`} class="settings-form rule">
      <FormName name={`mirror-${key}`} />
      <input type="hidden" name="mirror" value={mirror === null ? '' : String(mirror.id)} />
      <input type="hidden" name="direction" value={direction} />
      <Field name="url" id={id('url')} label="Remote URL (http or https, without credentials)" required value={values.url} />
      <Field name="userName" id={id('userName')} label="User name" value={values.userName} autocomplete="off" />
      <p class="field">
        <label for={id('password')}>
          {mirror?.passwordSet ? 'New password or access token (leave empty to keep the current one)' : 'Password or access token'}
        </label>
        <input id={id('password')} name="password" type="password" autocomplete="new-password" />
      </p>
      {mirror?.passwordSet && <Checkbox name="clearPassword" id={id('clearPassword')} label="Remove the stored password" checked={false} />}
      {direction === 'PULL' && (
        <p class="field">
          <label for={id('interval')}>{`Sync every (minutes, ${MIN_INTERVAL_MINUTES} to ${MAX_INTERVAL_MINUTES})`}</label>
          <input
            id={id('interval')}
            name="intervalMinutes"
            type="number"
            min={MIN_INTERVAL_MINUTES}
            max={MAX_INTERVAL_MINUTES}
            value={values.intervalMinutes}
          />
        </p>
      )}
      <Checkbox name="enabled" id={id('enabled')} label="Enabled" checked={values.enabled === 'on'} />
      <SaveButtons add={add} editing={mirror !== null} />
    </PostForm>
  );
}

function MirrorEntry({ page, mirror, error }: { page: ProjectPageContext; mirror: MirrorView; error: string | null }) {
  const form = `mirror-${mirror.id}`;
  return (
    <div class="rule-item">
      <div class="settings-row">
        <code>{mirror.url}</code>
        <PostForm page={page} action={`${settingsUrl(page, 'mirrors')}/sync`} label={`Sync mirror ${mirror.id} now`} class="inline">
          <input type="hidden" name="mirror" value={String(mirror.id)} />
          <button type="submit" disabled={!mirror.enabled}>
            Sync now
          </button>
        </PostForm>
      </div>
      <Status mirror={mirror} />
      <details open={error !== null && page.form.form === form}>
        <summary>Settings</summary>
        <MirrorForm page={page} direction={mirror.direction} mirror={mirror} values={formValues(page, error, form, valuesOf(mirror))} />
      </details>
    </div>
  );
}

async function show(page: ProjectPageContext, error: string | null) {
  const mirrors = await listMirrors(page.ctx, page.project.id);
  const pull = mirrors.find((m) => m.direction === 'PULL') ?? null;
  const pushes = mirrors.filter((m) => m.direction === 'PUSH');
  return (
    <SettingsLayout page={page} section="mirrors" error={error}>
      <section aria-labelledby="pull-title">
        <h2 id="pull-title">Pull mirror</h2>
        <p class="meta">
          The project's branches and tags follow the remote repository: fetched every interval, deleted when the remote deletes them. Pushes and other changes
          of them here are refused. A pull mirror needs a project with no branches or tags yet.
        </p>
        {pull ? (
          <MirrorEntry page={page} mirror={pull} error={error} />
        ) : (
          <MirrorForm page={page} direction="PULL" mirror={null} values={formValues(page, error, 'mirror-new-pull', valuesOf(null))} />
        )}
      </section>
      <section aria-labelledby="push-title">
        <h2 id="push-title">Push mirrors</h2>
        <p class="meta">
          After each change of the project's branches and tags they are pushed to each remote, forced, and the ones deleted here are deleted there. A failing
          remote is retried later, less and less often.
        </p>
        {pushes.length === 0 && <p class="empty">No push mirror yet.</p>}
        {pushes.map((mirror) => (
          <MirrorEntry key={mirror.id} page={page} mirror={mirror} error={error} />
        ))}
        <h3>Add a push mirror</h3>
        <MirrorForm page={page} direction="PUSH" mirror={null} values={formValues(page, error, 'mirror-new-push', valuesOf(null))} />
      </section>
    </SettingsLayout>
  );
}

/** The mirror fields of the submitted form; the password only when typed (or removed by its checkbox). */
function submitted(page: ProjectPageContext, direction: MirrorDirection): MirrorInput {
  const interval = (page.form.intervalMinutes ?? '').trim();
  if (direction === 'PULL' && interval !== '' && !/^\d{1,6}$/.test(interval)) throw new BadRequest('intervalMinutes must be a whole number of minutes');
  return {
    url: page.form.url ?? '',
    userName: optionalText(page, 'userName'),
    ...(page.form.password ? { password: page.form.password } : checked(page, 'clearPassword') && { password: null }),
    ...(direction === 'PULL' && interval !== '' && { intervalMinutes: Number(interval) }),
    enabled: checked(page, 'enabled'),
  };
}

const save = (page: ProjectPageContext) =>
  settingsChange(page, show, async () => {
    const direction: MirrorDirection = page.form.direction === 'PULL' ? 'PULL' : 'PUSH';
    const id = chosenId(page, 'mirror', 'mirror');
    if (id === null) return createMirror(page.ctx, page.project.id, { direction, ...submitted(page, direction) });
    if (page.form.op === 'delete') return deleteMirror(page.ctx, page.project.id, id);
    return updateMirror(page.ctx, page.project.id, id, submitted(page, direction));
  });

const sync = (page: ProjectPageContext) =>
  settingsChange(page, show, async () => {
    const id = chosenId(page, 'mirror', 'mirror');
    if (id === null) throw new BadRequest('No mirror chosen');
    await syncMirrorNow(page.ctx, page.project.id, id);
  });

/** `/~settings/mirrors`: the mirrors' forms and their "Sync now". */
export const mirrorSettingsPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~settings/mirrors', handler: (page) => show(page, null) },
  { method: 'POST', path: '/~settings/mirrors', access: 'user', handler: save },
  { method: 'POST', path: '/~settings/mirrors/sync', access: 'user', handler: sync },
];
