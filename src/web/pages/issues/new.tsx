/** `/<project>/~issues/new`: the form, and opening the issue it submits. */
import { getIssue, ISSUE_FIELDS, openIssue } from '../../../domain/issues/index.js';
import { Field, PostForm } from '../../components/forms.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { redirect, submitForm, type PageResult, type ProjectPageContext } from '../../page.js';
import { Flash } from '../../components/flash.js';

function NewIssueForm({ page, values, error }: { page: ProjectPageContext; values: Record<string, string>; error?: string }) {
  const enums = ISSUE_FIELDS.filter((f) => f.type === 'Enumeration');
  return (
    <ProjectLayout page={page} tab="issues" title="New issue" scripts={['preview.js']}>
      <h1>New issue</h1>
      <Flash error={error} />
      <PostForm page={page} action={`/${page.project.path}/~issues/new`} label="New issue">
        <Field name="title" label="Title" value={values.title} required />
        <p class="field">
          <label for="field-description">Description</label>
          <textarea id="field-description" name="description" rows={8}>
            {values.description ?? ''}
          </textarea>
        </p>
        {enums.map((spec) => (
          <p class="field" key={spec.name}>
            <label for={`field-${spec.name}`}>{spec.name}</label>
            <select id={`field-${spec.name}`} name={spec.name}>
              {spec.choices.map((choice) => (
                <option key={choice} selected={(values[spec.name] ?? spec.defaultValue) === choice}>
                  {choice}
                </option>
              ))}
            </select>
          </p>
        ))}
        <p class="actions">
          <button type="submit">Create issue</button>
        </p>
      </PostForm>
    </ProjectLayout>
  );
}

/** GET `/<project>/~issues/new`. */
export async function newIssueForm(page: ProjectPageContext): Promise<PageResult> {
  return <NewIssueForm page={page} values={{}} />;
}

/** POST `/<project>/~issues/new`: opens the issue, or shows the form again with the refusal. */
export async function openIssueFromForm(page: ProjectPageContext): Promise<PageResult> {
  const fields: Record<string, string> = {};
  for (const spec of ISSUE_FIELDS) if (spec.type === 'Enumeration' && page.form[spec.name]) fields[spec.name] = page.form[spec.name];
  return submitForm(
    page,
    () =>
      openIssue(page.ctx, {
        projectId: page.project.id,
        title: page.form.title ?? '',
        description: page.form.description ?? null,
        fields,
      }),
    async (id) => redirect(`/${page.project.path}/~issues/${(await getIssue(page.ctx, id)).number}`),
    (message) => <NewIssueForm page={page} values={page.form} error={message} />,
  );
}
