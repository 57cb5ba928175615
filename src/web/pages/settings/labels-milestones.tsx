/**
 * `/<project>/~settings/labels` (the label specs put on the project: add, remove) and
 * `/<project>/~settings/milestones` (the project's own milestones: create, edit, close, delete),
 * through the functions of the API's `/project-labels` and `/milestones` routes
 * (docs/compatibility.md#projects-milestones, docs/compatibility.md#projects-labels).
 */
import { deny } from '../../../domain/actor.js';
import {
  createMilestone,
  createProjectLabel,
  deleteMilestone,
  deleteProjectLabel,
  labelSpecChoices,
  type MilestoneRow,
  projectLabelNames,
  queryMilestones,
  updateMilestone,
} from '../../../domain/projects/index.js';
import { BadRequest, NotFound } from '../../../errors.js';
import { Checkbox, Select, TextArea } from '../../components/controls.js';
import { Field, PostForm, InlineForm } from '../../components/forms.js';
import type { ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { checked, chosenId, FormName, formValues, optionalText, SettingsLayout, settingsChange, settingsUrl, SaveButtons } from './shared.js';

async function showLabels(page: ProjectPageContext, error: string | null) {
  const [labels, specs] = await Promise.all([projectLabelNames(page.ctx, page.project.id), labelSpecChoices(page.ctx, page.project.id)]);
  const free = specs.filter((s) => !labels.some((l) => l.name === s.name));
  const action = settingsUrl(page, 'labels');
  return (
    <SettingsLayout page={page} section="labels" error={error}>
      {labels.length === 0 ? (
        <p class="empty">No label on this project.</p>
      ) : (
        <ul class="list" aria-label="Labels">
          {labels.map((l) => (
            <li key={l.id} class="settings-row">
              <span class="badge">{l.name}</span>
              <InlineForm
                page={page}
                action={`${action}/delete`}
                label={`Remove label ${l.name}`}
                fields={{ id: String(l.id) }}
                buttonClass="danger"
                buttonLabel={`Remove label ${l.name}`}
              >
                Remove
              </InlineForm>
            </li>
          ))}
        </ul>
      )}
      {specs.length === 0 ? (
        <p class="meta">No label is defined yet: administrators define labels in the administration.</p>
      ) : (
        <PostForm page={page} action={action} label="Add a label" class="settings-form row-form">
          <Select name="specId" label="Label" required value={page.form.specId} options={free.map((s) => ({ value: String(s.id), label: s.name }))} />
          <p>
            <button type="submit">Add label</button>
          </p>
        </PostForm>
      )}
    </SettingsLayout>
  );
}

/** An epoch-ms date as the value of a date input (UTC day), or empty. */
const dayOf = (ms: number | null) => (ms === null ? '' : new Date(ms).toISOString().slice(0, 10));

/** A date input's value as epoch ms (start of that UTC day), null when empty; BadRequest when malformed. */
function msOf(page: ProjectPageContext, name: string, label: string): number | null {
  const value = (page.form[name] ?? '').trim();
  if (value === '') return null;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms)) throw new BadRequest(`${label} is not a date (YYYY-MM-DD): ${value}`);
  return ms;
}

function milestoneValues(m: Partial<MilestoneRow>): Record<string, string> {
  return {
    name: m.name ?? '',
    description: m.description ?? '',
    startDate: dayOf(m.startDate ?? null),
    dueDate: dayOf(m.dueDate ?? null),
    closed: m.closed ? 'on' : '',
  };
}

function MilestoneForm({ page, index, id, values }: { page: ProjectPageContext; index: string; id: number | null; values: Record<string, string> }) {
  const fieldId = (name: string) => `milestone-${index}-${name}`;
  return (
    <PostForm
      page={page}
      action={settingsUrl(page, 'milestones')}
      label={id === null ? 'New milestone' : `Milestone ${values.name}`}
      class="settings-form rule"
    >
      <FormName name={index} />
      <input type="hidden" name="id" value={id === null ? '' : String(id)} />
      <Field name="name" id={fieldId('name')} label="Name" required value={values.name} />
      <TextArea name="description" id={fieldId('description')} label="Description" value={values.description} />
      <p class="field">
        <label for={fieldId('startDate')}>Start date</label>
        <input type="date" id={fieldId('startDate')} name="startDate" value={values.startDate} />
      </p>
      <p class="field">
        <label for={fieldId('dueDate')}>Due date</label>
        <input type="date" id={fieldId('dueDate')} name="dueDate" value={values.dueDate} />
      </p>
      {id !== null && <Checkbox name="closed" id={fieldId('closed')} label="Closed" checked={values.closed === 'on'} />}
      <SaveButtons add="Create milestone" editing={id !== null} />
    </PostForm>
  );
}

/** The project's own milestones (not its ancestors'), open first. */
async function ownMilestones(page: ProjectPageContext): Promise<MilestoneRow[]> {
  const all = await queryMilestones(page.ctx, page.project.id, {}, 0, 1000);
  return all.filter((m) => m.projectId === page.project.id).sort((a, b) => a.closed - b.closed);
}

async function showMilestones(page: ProjectPageContext, error: string | null) {
  if (!page.permissions.manage) deny(page.ctx.actor); // settings are for managers, as the other sections
  const milestones = await ownMilestones(page);
  return (
    <SettingsLayout page={page} section="milestones" error={error}>
      {milestones.length === 0 && <p class="empty">No milestone yet.</p>}
      {milestones.map((m) => (
        <details key={m.id} class="rule-item" open={error !== null && page.form.form === String(m.id)}>
          <summary>{`${m.name}${m.closed ? ' (closed)' : ''}${m.dueDate === null ? '' : ` · due ${dayOf(m.dueDate)}`}`}</summary>
          <MilestoneForm page={page} index={String(m.id)} id={m.id} values={formValues(page, error, String(m.id), milestoneValues(m))} />
        </details>
      ))}
      <h2>Create a milestone</h2>
      <MilestoneForm page={page} index="new" id={null} values={formValues(page, error, 'new', milestoneValues({}))} />
    </SettingsLayout>
  );
}

/** `/~settings/labels` and `/~settings/milestones` with their forms. */
export const labelMilestoneSettingsPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~settings/labels', handler: (page) => showLabels(page, null) },
  {
    method: 'POST',
    path: '/~settings/labels',
    access: 'user',
    handler: (page) =>
      settingsChange(page, showLabels, () => createProjectLabel(page.ctx, { projectId: page.project.id, specId: chosenId(page, 'specId', 'label') ?? 0 })),
  },
  {
    method: 'POST',
    path: '/~settings/labels/delete',
    access: 'user',
    handler: (page) =>
      settingsChange(
        page,
        showLabels,
        async () => {
          const label = (await projectLabelNames(page.ctx, page.project.id)).find((l) => String(l.id) === page.form.id);
          if (!label) throw new NotFound(`Project label not found: ${page.form.id ?? ''}`);
          await deleteProjectLabel(page.ctx, label.id);
        },
        settingsUrl(page, 'labels'),
      ),
  },
  { method: 'GET', path: '/~settings/milestones', handler: (page) => showMilestones(page, null) },
  {
    method: 'POST',
    path: '/~settings/milestones',
    access: 'user',
    handler: (page) =>
      settingsChange(page, showMilestones, async () => {
        const id = page.form.id ? (await ownMilestones(page)).find((m) => String(m.id) === page.form.id)?.id : null;
        if (id === undefined) throw new NotFound(`Milestone not found: ${page.form.id ?? ''}`);
        if (id !== null && page.form.op === 'delete') return deleteMilestone(page.ctx, id);
        const data = {
          name: page.form.name ?? '',
          description: optionalText(page, 'description'),
          startDate: msOf(page, 'startDate', 'Start date'),
          dueDate: msOf(page, 'dueDate', 'Due date'),
        };
        if (id === null) return createMilestone(page.ctx, { ...data, projectId: page.project.id });
        return updateMilestone(page.ctx, id, { ...data, closed: checked(page, 'closed') });
      }),
  },
];
