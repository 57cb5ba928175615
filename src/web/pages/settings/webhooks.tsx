/**
 * `/<project>/~settings/webhooks`: the project's webhooks (docs/compatibility.md#projects-settings `webHooks`),
 * saved through the function of the API's Update Setting route, and their recent deliveries with
 * every attempt and a redelivery button (docs/compatibility.md#gitloom-differs-webhooks-and-notifications, the functions of the webhook delivery
 * routes). A hook's secret is write-only here: never shown back, replaced only when a new one is typed.
 */
import { listWebhookDeliveries, redeliverWebhook, type WebhookDelivery } from '../../../domain/outbox/index.js';
import { getProjectSetting, updateProjectSetting, WEBHOOK_EVENT_TYPES } from '../../../domain/projects/index.js';
import { BadRequest } from '../../../errors.js';
import { DateTime } from '../../components/code.js';
import { Checkbox } from '../../components/controls.js';
import { Field, PostForm } from '../../components/forms.js';
import type { ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { checked, chosenId, FormName, formValues, SettingsLayout, settingsChange, settingsUrl, SaveButtons } from './shared.js';

type Hook = Record<string, unknown>;

/** Deliveries shown per page. */
const PAGE_SIZE = 20;

/** A hook's form values: its URL and one `event-<TYPE>` checkbox per event type; never its secret. */
function valuesOf(hook: Hook): Record<string, string> {
  const types = Array.isArray(hook.eventTypes) ? hook.eventTypes : [];
  return {
    postUrl: typeof hook.postUrl === 'string' ? hook.postUrl : '',
    ...Object.fromEntries(WEBHOOK_EVENT_TYPES.map((t) => [`event-${t}`, types.includes(t) ? 'on' : ''])),
  };
}

function HookForm({ page, index, values }: { page: ProjectPageContext; index: number | null; values: Record<string, string> }) {
  const id = (name: string) => `hook-${index ?? 'new'}-${name}`;
  return (
    <PostForm
      page={page}
      action={settingsUrl(page, 'webhooks')}
      label={index === null ? 'New webhook' : `Webhook ${values.postUrl}`}
      class="settings-form rule"
    >
      <FormName name={`hook-${index ?? 'new'}`} />
      <input type="hidden" name="index" value={index === null ? '' : String(index)} />
      <Field name="postUrl" id={id('postUrl')} label="Post URL" required value={values.postUrl} />
      <fieldset>
        <legend>Events</legend>
        {WEBHOOK_EVENT_TYPES.map((t) => (
          <Checkbox key={t} name={`event-${t}`} id={id(t)} label={t} checked={values[`event-${t}`] === 'on'} />
        ))}
      </fieldset>
      <p class="field">
        <label for={id('secret')}>{index === null ? 'Secret (leave empty to generate one)' : 'New secret (leave empty to keep the current one)'}</label>
        <input id={id('secret')} name="secret" type="password" autocomplete="new-password" />
      </p>
      <SaveButtons add="Add webhook" editing={index !== null} />
    </PostForm>
  );
}

function Deliveries({ page, deliveries, offset, hasNext }: { page: ProjectPageContext; deliveries: WebhookDelivery[]; offset: number; hasNext: boolean }) {
  const base = settingsUrl(page, 'webhooks');
  const more = (at: number) => `${base}?offset=${at}`;
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Recent deliveries</h2>
      {deliveries.length === 0 ? (
        <p class="empty">No delivery yet.</p>
      ) : (
        <div class="table-scroll">
          <table class="deliveries" aria-label="Deliveries">
            <thead>
              <tr>
                <th>Event</th>
                <th>URL</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Created</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <td>{d.eventType}</td>
                  <td>
                    <code>{d.target}</code>
                  </td>
                  <td>{d.status}</td>
                  <td>
                    {d.attempts.length === 0 ? (
                      <span class="meta">none yet</span>
                    ) : (
                      <ol>
                        {d.attempts.map((a) => (
                          <li key={a.id}>
                            {`${a.succeeded ? 'Succeeded' : 'Failed'}: ${a.responseStatus !== null ? `HTTP ${a.responseStatus}` : (a.error ?? 'no response')}, ${a.durationMs} ms, `}
                            <DateTime date={new Date(a.date)} />
                          </li>
                        ))}
                      </ol>
                    )}
                  </td>
                  <td>
                    <DateTime date={new Date(d.createDate)} />
                  </td>
                  <td>
                    <PostForm page={page} action={`${base}/redeliver`} label={`Redeliver delivery ${d.id}`}>
                      <input type="hidden" name="delivery" value={String(d.id)} />
                      <button type="submit">Redeliver</button>
                    </PostForm>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(offset > 0 || hasNext) && (
        <nav class="pager" aria-label="Pages">
          {offset > 0 && (
            <a href={more(Math.max(0, offset - PAGE_SIZE))} rel="prev">
              Newer
            </a>
          )}
          {hasNext && (
            <a href={more(offset + PAGE_SIZE)} rel="next">
              Older
            </a>
          )}
        </nav>
      )}
    </section>
  );
}

async function show(page: ProjectPageContext, error: string | null) {
  const setting = await getProjectSetting(page.ctx, page.project.id);
  const hooks = (Array.isArray(setting.webHooks) ? setting.webHooks : []) as Hook[];
  const offset = Math.max(0, Math.floor(Number(page.query.offset)) || 0);
  const rows = await listWebhookDeliveries(page.ctx, page.project.id, offset, PAGE_SIZE + 1);
  return (
    <SettingsLayout page={page} section="webhooks" error={error}>
      <section aria-labelledby="hooks-title">
        <h2 id="hooks-title">Webhooks</h2>
        <p class="meta">Events of this project and its child projects are posted as JSON to each hook, signed with its secret.</p>
        {hooks.length === 0 && <p class="empty">No webhook yet.</p>}
        {hooks.map((hook, i) => (
          <details key={i} class="rule-item" open={error !== null && page.form.form === `hook-${i}`}>
            <summary>{valuesOf(hook).postUrl}</summary>
            <HookForm page={page} index={i} values={formValues(page, error, `hook-${i}`, valuesOf(hook))} />
          </details>
        ))}
        <h3>Add a webhook</h3>
        <HookForm page={page} index={null} values={formValues(page, error, 'hook-new', valuesOf({}))} />
      </section>
      <Deliveries page={page} deliveries={rows.slice(0, PAGE_SIZE)} offset={offset} hasNext={rows.length > PAGE_SIZE} />
    </SettingsLayout>
  );
}

const save = (page: ProjectPageContext) =>
  settingsChange(page, show, async () => {
    const setting = await getProjectSetting(page.ctx, page.project.id);
    const hooks = [...((Array.isArray(setting.webHooks) ? setting.webHooks : []) as Hook[])];
    const index = page.form.index ? Number(page.form.index) : null;
    if (index !== null && !(Number.isInteger(index) && index >= 0 && index < hooks.length))
      throw new BadRequest('This webhook no longer exists: reload the page');
    if (index !== null && page.form.op === 'delete') {
      hooks.splice(index, 1);
    } else {
      const stored = index === null ? {} : hooks[index];
      const hook: Hook = {
        ...stored,
        postUrl: (page.form.postUrl ?? '').trim(),
        eventTypes: WEBHOOK_EVENT_TYPES.filter((t) => checked(page, `event-${t}`)),
      };
      if (page.form.secret) hook.secret = page.form.secret;
      if (index === null) hooks.push(hook);
      else hooks[index] = hook;
    }
    await updateProjectSetting(page.ctx, page.project.id, { ...setting, webHooks: hooks });
  });

const redeliver = (page: ProjectPageContext) =>
  settingsChange(page, show, async () => {
    const id = chosenId(page, 'delivery', 'delivery');
    if (id === null) throw new BadRequest('No delivery chosen');
    await redeliverWebhook(page.ctx, id);
  });

/** `/~settings/webhooks`: the hooks' forms and the deliveries' redelivery. */
export const webhookSettingsPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~settings/webhooks', handler: (page) => show(page, null) },
  { method: 'POST', path: '/~settings/webhooks', access: 'user', handler: save },
  { method: 'POST', path: '/~settings/webhooks/redeliver', access: 'user', handler: redeliver },
];
