/**
 * `/<project>/~settings/build`: the project's job secrets and job properties (docs/compatibility.md#projects-settings `buildSetting`), saved through the function of the API's Update Setting route. A secret's
 * value is write-only here: never shown back, replaced only when a new one is typed.
 */
import { getProjectSetting, updateProjectSetting } from '../../../domain/projects/index.js';
import { BadRequest } from '../../../errors.js';
import { Checkbox } from '../../components/controls.js';
import { Field, PostForm } from '../../components/forms.js';
import type { ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { checked, FormName, formValues, optionalText, SettingsLayout, settingsChange, settingsUrl, SaveButtons } from './shared.js';

type Kind = 'secret' | 'property';
type Entry = Record<string, unknown>;

const KINDS = {
  secret: { list: 'jobSecrets', title: 'Job secrets', noun: 'job secret' },
  property: { list: 'jobProperties', title: 'Job properties', noun: 'job property' },
} as const;

/** An entry's form values; a secret's value is never among them. */
function valuesOf(kind: Kind, entry: Entry): Record<string, string> {
  return {
    name: typeof entry.name === 'string' ? entry.name : '',
    value: kind === 'property' && typeof entry.value === 'string' ? entry.value : '',
    authorizedBranches: typeof entry.authorizedBranches === 'string' ? entry.authorizedBranches : '',
    authorization: typeof entry.authorization === 'string' ? entry.authorization : '',
    archived: entry.archived === true ? 'on' : '',
  };
}

function EntryForm({ page, kind, index, values }: { page: ProjectPageContext; kind: Kind; index: number | null; values: Record<string, string> }) {
  const id = (name: string) => `${kind}-${index ?? 'new'}-${name}`;
  const form = `${kind}-${index ?? 'new'}`;
  const secret = kind === 'secret';
  return (
    <PostForm
      page={page}
      action={`${settingsUrl(page, 'build')}/${kind === 'secret' ? 'secrets' : 'properties'}`}
      label={index === null ? `New ${KINDS[kind].noun}` : `${KINDS[kind].noun} ${values.name}`}
      class="settings-form rule"
    >
      <FormName name={form} />
      <input type="hidden" name="index" value={index === null ? '' : String(index)} />
      <Field name="name" id={id('name')} label="Name" required value={values.name} />
      {secret ? (
        <p class="field">
          <label for={id('value')}>{index === null ? 'Value' : 'New value (leave empty to keep the current one)'}</label>
          <input id={id('value')} name="value" type="password" autocomplete="new-password" required={index === null} />
        </p>
      ) : (
        <Field name="value" id={id('value')} label="Value" value={values.value} />
      )}
      {secret && (
        <Field
          name="authorizedBranches"
          id={id('authorizedBranches')}
          label="Authorized branches (space-separated patterns such as main release/**, - to exclude; empty for all branches)"
          value={values.authorizedBranches}
        />
      )}
      {secret && (
        <Field
          name="authorization"
          id={id('authorization')}
          label={'Authorization (a job match such as on branch "main" or submitted by group "release"; empty for no further limit)'}
          value={values.authorization}
        />
      )}
      <Checkbox name="archived" id={id('archived')} label="Archived" checked={values.archived === 'on'} />
      <SaveButtons add={`Add ${KINDS[kind].noun}`} editing={index !== null} />
    </PostForm>
  );
}

async function show(page: ProjectPageContext, error: string | null) {
  const setting = await getProjectSetting(page.ctx, page.project.id);
  const build = (setting.buildSetting ?? {}) as Record<string, unknown>;
  return (
    <SettingsLayout page={page} section="build" error={error}>
      {(['secret', 'property'] as const).map((kind) => {
        const entries = (Array.isArray(build[KINDS[kind].list]) ? build[KINDS[kind].list] : []) as Entry[];
        return (
          <section key={kind} aria-labelledby={`${kind}-title`}>
            <h2 id={`${kind}-title`}>{KINDS[kind].title}</h2>
            {kind === 'secret' && (
              <p class="meta">
                Values are stored encrypted and never shown again; jobs read them as <code>@secret:name@</code>. Builds of pull requests from forks or from
                authors without write access get no secret.
              </p>
            )}
            {entries.length === 0 && <p class="empty">{`No ${KINDS[kind].noun} yet.`}</p>}
            {entries.map((entry, i) => (
              <details key={i} class="rule-item" open={error !== null && page.form.form === `${kind}-${i}`}>
                <summary>{`${valuesOf(kind, entry).name}${entry.archived === true ? ' (archived)' : ''}`}</summary>
                <EntryForm page={page} kind={kind} index={i} values={formValues(page, error, `${kind}-${i}`, valuesOf(kind, entry))} />
              </details>
            ))}
            <h3>{`Add a ${KINDS[kind].noun}`}</h3>
            <EntryForm page={page} kind={kind} index={null} values={formValues(page, error, `${kind}-new`, valuesOf(kind, {}))} />
          </section>
        );
      })}
    </SettingsLayout>
  );
}

function saveFor(kind: Kind) {
  return (page: ProjectPageContext) =>
    settingsChange(page, show, async () => {
      const setting = await getProjectSetting(page.ctx, page.project.id);
      const build = { ...((setting.buildSetting as Record<string, unknown>) ?? {}) };
      const list = KINDS[kind].list;
      const entries = [...((Array.isArray(build[list]) ? build[list] : []) as Entry[])];
      const index = page.form.index ? Number(page.form.index) : null;
      if (index !== null && !(Number.isInteger(index) && index >= 0 && index < entries.length))
        throw new BadRequest(`This ${KINDS[kind].noun} no longer exists: reload the page`);
      if (index !== null && page.form.op === 'delete') {
        entries.splice(index, 1);
      } else {
        const name = (page.form.name ?? '').trim();
        if (name === '') throw new BadRequest('Name is required');
        if (entries.some((e, i) => i !== index && e.name === name)) throw new BadRequest(`Name already used by another ${KINDS[kind].noun}: ${name}`);
        const typed = page.form.value ?? '';
        const stored = index === null ? {} : entries[index];
        if (kind === 'secret' && index === null && typed === '') throw new BadRequest('Value is required');
        const entry: Entry = { ...stored, name, archived: checked(page, 'archived') };
        if (kind === 'secret') {
          entry.authorizedBranches = optionalText(page, 'authorizedBranches');
          entry.authorization = optionalText(page, 'authorization');
          if (typed !== '') entry.value = typed;
        } else {
          entry.value = typed;
        }
        if (index === null) entries.push(entry);
        else entries[index] = entry;
      }
      build[list] = entries;
      await updateProjectSetting(page.ctx, page.project.id, { ...setting, buildSetting: build });
    });
}

/** `/~settings/build` and its job secret and job property forms. */
export const buildSettingsPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~settings/build', handler: (page) => show(page, null) },
  { method: 'POST', path: '/~settings/build/secrets', access: 'user', handler: saveFor('secret') },
  { method: 'POST', path: '/~settings/build/properties', access: 'user', handler: saveFor('property') },
];
