/**
 * The builds lists (docs/compatibility.md#gitloom-differs-web-ui): `/<project>/~builds` and `/~builds` across projects, paged,
 * filtered by the build query language (docs/compatibility.md#builds-query-language, the same function as
 * `GET /~api/builds?query=…`), and on a project's list the "Run job" control: one form per job of
 * the default branch's build spec the visitor may run, posting to `/<project>/~builds/run`, which
 * calls the domain function behind `POST /~api/job-runs` ({@link runJob}).
 */
import { branchCommit, buildProjectPaths, getBuild, queryBuilds, runJob, type RunnableJob, runnableJobs } from '../../../domain/builds/index.js';
import { Field, PostForm } from '../../components/forms.js';
import { Layout } from '../../components/layout.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { QueryBox } from '../../components/query-box.js';
import { SavedQueries } from '../../components/saved-queries.js';
import { redirect, submitForm, type PageResult, type PageRoute, type ProjectPageContext, type ProjectPageRoute } from '../../page.js';
import { Pager, queryPage } from '../../components/query-list.js';
import { BuildTable } from './build-parts.js';
import { Flash } from '../../components/flash.js';

const EXAMPLE = '"Job" is "CI" and successful';
/** The submit reason of builds run from the web UI (OneDev's text). */
export const MANUAL_REASON = 'Submitted manually';
/** The submit reason of builds rebuilt from the web UI (OneDev's text). */
export const REBUILD_REASON = 'Resubmitted manually';

/** The form field of a job param (`param:<name>`, and `param:<name>:<i>` per choice of a multi-valued one). */
function ParamInput({ spec, id }: { spec: RunnableJob['paramSpecs'][number]; id: string }) {
  const name = `param:${spec.name}`;
  const defaults = spec.defaultValue ?? [];
  if (spec.type === 'BooleanParam') {
    return (
      <p class="field check">
        <input id={id} name={name} type="checkbox" value="true" checked={defaults[0] === 'true'} />
        <label for={id}>{spec.name}</label>
      </p>
    );
  }
  if (spec.type === 'ChoiceParam' && spec.allowMultiple) {
    return (
      <fieldset class="field">
        <legend>{spec.name}</legend>
        {(spec.choices ?? []).map((choice, i) => (
          <p class="check" key={choice}>
            <input id={`${id}-${i}`} name={`${name}:${i}`} type="checkbox" value={choice} checked={defaults.includes(choice)} />
            <label for={`${id}-${i}`}>{choice}</label>
          </p>
        ))}
      </fieldset>
    );
  }
  if (spec.type === 'ChoiceParam') {
    return (
      <p class="field">
        <label for={id}>{spec.name}</label>
        <select id={id} name={name}>
          {spec.allowEmpty && <option value="">(none)</option>}
          {(spec.choices ?? []).map((choice) => (
            <option key={choice} value={choice} selected={defaults[0] === choice}>
              {choice}
            </option>
          ))}
        </select>
      </p>
    );
  }
  return <Field id={id} name={name} label={spec.name} value={defaults[0] ?? ''} required={!spec.allowEmpty} />;
}

/** The "Run job" control: a disclosure with one form per runnable job (no script needed). */
function RunJobs({ page, branch, jobs }: { page: ProjectPageContext; branch: string; jobs: RunnableJob[] }) {
  return (
    <details class="run-job">
      <summary>Run job</summary>
      {jobs.map((job, j) => (
        <PostForm key={job.name} page={page} action={`/${page.project.path}/~builds/run`} label={`Run ${job.name}`}>
          <fieldset>
            <legend>{job.name}</legend>
            <input type="hidden" name="job" value={job.name} />
            <Field id={`run-${j}-branch`} name="branch" label="Branch" value={branch} required />
            {job.paramSpecs.map((spec, p) => (
              <ParamInput key={spec.name} spec={spec} id={`run-${j}-param-${p}`} />
            ))}
            <p>
              <button type="submit">{`Run ${job.name}`}</button>
            </p>
          </fieldset>
        </PostForm>
      ))}
    </details>
  );
}

/** The params of a run from the submitted form, in the shapes {@link runJob} takes. */
function paramsOf(form: Record<string, string>, specs: RunnableJob['paramSpecs']): Record<string, string[]> {
  const params: Record<string, string[]> = {};
  for (const spec of specs) {
    const name = `param:${spec.name}`;
    if (spec.type === 'BooleanParam') params[spec.name] = [form[name] === 'true' ? 'true' : 'false'];
    else if (spec.type === 'ChoiceParam' && spec.allowMultiple) {
      params[spec.name] = (spec.choices ?? []).map((_, i) => form[`${name}:${i}`]).filter((v): v is string => v !== undefined);
    } else {
      const value = form[name] ?? '';
      params[spec.name] = value === '' ? [] : [value];
    }
  }
  return params;
}

async function projectList(page: ProjectPageContext, runError: string | null = null): Promise<PageResult> {
  const [list, runnable] = await Promise.all([
    queryPage(page, '', (query, offset, count) => queryBuilds(page.ctx, query, offset, count, { projectId: page.project.id })),
    runnableJobs(page.ctx, page.project),
  ]);
  const base = `/${page.project.path}/~builds`;
  return (
    <ProjectLayout page={page} tab="builds" title="Builds">
      <h1>Builds</h1>
      <Flash error={runError} />
      {runnable.branch && runnable.jobs.length > 0 && <RunJobs page={page} branch={runnable.branch} jobs={runnable.jobs} />}
      <QueryBox action={base} query={list.query} example={EXAMPLE} error={list.error} />
      {await SavedQueries({ page, kind: 'build', action: base })}
      {!list.error && list.rows.length === 0 && <p class="empty">No build found.</p>}
      {list.rows.length > 0 && <BuildTable builds={list.rows} projectPath={page.project.path} now={page.ctx.now()} />}
      <Pager action={base} list={list} />
    </ProjectLayout>
  );
}

/** `GET /~builds`: the builds of every project the visitor can see. */
export const buildListPage: PageRoute = {
  method: 'GET',
  path: '/~builds',
  handler: async (page) => {
    const list = await queryPage(page, '', (query, offset, count) => queryBuilds(page.ctx, query, offset, count, {}));
    const paths = await buildProjectPaths(page.ctx, list.rows);
    return (
      <Layout page={page} title="Builds">
        <h1>Builds</h1>
        <QueryBox action="/~builds" query={list.query} example={`"Project" is "app" and ${EXAMPLE}`} error={list.error} />
        {await SavedQueries({ page, kind: 'build', action: '/~builds' })}
        {!list.error && list.rows.length === 0 && <p class="empty">No build found.</p>}
        {list.rows.length > 0 && <BuildTable builds={list.rows} paths={paths} now={page.ctx.now()} />}
        <Pager action="/~builds" list={list} />
      </Layout>
    );
  },
};

/** `GET /<project>/~builds` and `POST /<project>/~builds/run`. */
export const projectBuildListPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~builds', handler: (page) => projectList(page) },
  {
    method: 'POST',
    path: '/~builds/run',
    handler: async (page) => {
      const jobName = page.form.job ?? '';
      const { jobs } = await runnableJobs(page.ctx, page.project);
      const specs = jobs.find((job) => job.name === jobName)?.paramSpecs ?? [];
      return submitForm(
        page,
        async () => {
          const { refName, commitHash } = await branchCommit(page.ctx, page.project, page.form.branch ?? '');
          return runJob(page.ctx, {
            '@type': 'JobRunOnCommit',
            projectId: page.project.id,
            commitHash,
            refName,
            jobName,
            params: paramsOf(page.form, specs),
            reason: MANUAL_REASON,
          });
        },
        async (id) => redirect(`/${page.project.path}/~builds/${(await getBuild(page.ctx, id)).number}`),
        (message) => projectList(page, message),
      );
    },
  },
];
