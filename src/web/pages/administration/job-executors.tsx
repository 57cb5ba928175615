/**
 * `/~administration/job-executors` (the job executors of `/~api/settings/job-executors`,
 * docs/compatibility.md#builds-job-executors): the executors in order, each enabled or not, moved
 * up or down, enabled, disabled or deleted; `/~administration/job-executors/new?type=…` and
 * `/~administration/job-executors/<n>` edit one in a form of its type — a remote executor's with
 * its agent selector (`agentQuery`, docs/compatibility.md#build-agents) and concurrency per agent. Every change stores the
 * whole list through the domain's one check, so the page refuses what the API refuses, with the
 * same message.
 */
import { Fragment } from 'preact';
import {
  getJobExecutors,
  isDockerExecutor,
  isRemoteExecutor,
  JOB_EXECUTOR_TYPES,
  newJobExecutor,
  setJobExecutors,
  type JobExecutor,
  type JobExecutorType,
  type RemoteDockerExecutor,
  type ServerDockerExecutor,
} from '../../../domain/builds/index.js';
import { BadRequest, NotFound } from '../../../errors.js';
import { Field, InlineForm, PostForm } from '../../components/forms.js';
import { Checkbox } from '../../components/controls.js';
import { checked, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

const BASE = '/~administration/job-executors';
const TYPE_NAMES: Record<JobExecutorType, string> = {
  ServerDockerExecutor: 'Server docker executor',
  ServerShellExecutor: 'Server shell executor',
  RemoteDockerExecutor: 'Remote docker executor',
  RemoteShellExecutor: 'Remote shell executor',
};

async function listPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const executors = await getJobExecutors(page.ctx);
  return (
    <SettingsLayout page={page} area="administration" section="job-executors" title="Job executors" error={error}>
      <p>
        A build runs on the executor its job names, else on the first enabled one whose job requirement accepts it. With none, one is discovered: server docker
        when a container engine can be had, else server shell.
      </p>
      {executors.length === 0 ? (
        <p class="empty">No job executor yet: builds run on the auto-discovered one.</p>
      ) : (
        <ol class="list job-executors" aria-label="Job executors">
          {executors.map((executor, index) => (
            <ExecutorRow key={executor.name} page={page} executor={executor} index={index} last={index === executors.length - 1} />
          ))}
        </ol>
      )}
      <p>
        {JOB_EXECUTOR_TYPES.map((type) => (
          <Fragment key={type}>
            <a class="button" href={`${BASE}/new?type=${type}`}>
              {`New ${TYPE_NAMES[type].toLowerCase()}`}
            </a>{' '}
          </Fragment>
        ))}
      </p>
    </SettingsLayout>
  );
}

/** One executor of the list: its name, type, state and requirement, and its actions. */
function ExecutorRow({ page, executor, index, last }: { page: PageContext; executor: JobExecutor; index: number; last: boolean }) {
  const fields = (op: string) => ({ op, index: String(index), name: executor.name });
  const action = (op: string, label: string, text: string, buttonClass?: string) => (
    <InlineForm page={page} action={BASE} label={label} fields={fields(op)} buttonClass={buttonClass} buttonLabel={label}>
      {text}
    </InlineForm>
  );
  return (
    <li class="row">
      <a href={`${BASE}/${index}`}>{executor.name}</a> <span class="muted">{TYPE_NAMES[executor['@type']]}</span>{' '}
      <span class="badge">{executor.enabled ? 'enabled' : 'disabled'}</span>
      {executor.jobRequirement !== null && <code>{executor.jobRequirement}</code>}
      {isRemoteExecutor(executor) && <span class="meta">{executor.agentQuery === null ? ' on any agent' : ' on agents '}</span>}
      {isRemoteExecutor(executor) && executor.agentQuery !== null && <code>{executor.agentQuery}</code>}
      <span class="actions">
        {index > 0 && action('up', `Move ${executor.name} up`, 'Up')}
        {!last && action('down', `Move ${executor.name} down`, 'Down')}
        {executor.enabled ? action('disable', `Disable ${executor.name}`, 'Disable') : action('enable', `Enable ${executor.name}`, 'Enable')}
        {action('delete', `Delete ${executor.name}`, 'Delete', 'danger')}
      </span>
    </li>
  );
}

/**
 * The list with the change of the list page's form applied: `op` (`up`, `down`, `enable`,
 * `disable`, `delete`) on the executor at `index`, which must still be named `name`.
 *
 * @throws BadRequest when the list changed meanwhile or the operation is unknown.
 */
function changedList(executors: JobExecutor[], form: Record<string, string>): JobExecutor[] {
  const index = Number(form.index);
  const executor = /^\d{1,4}$/.test(form.index ?? '') ? executors[index] : undefined;
  if (!executor || executor.name !== form.name) throw new BadRequest('The job executors changed meanwhile: look at the list again');
  const list = [...executors];
  const swap = (other: number): void => {
    if (other < 0 || other >= list.length) return;
    [list[index], list[other]] = [list[other], list[index]];
  };
  if (form.op === 'up') swap(index - 1);
  else if (form.op === 'down') swap(index + 1);
  else if (form.op === 'enable' || form.op === 'disable') list[index] = { ...executor, enabled: form.op === 'enable' };
  else if (form.op === 'delete') list.splice(index, 1);
  else throw new BadRequest(`Unknown operation: ${form.op ?? ''}`);
  return list;
}

async function changeList(page: PageContext): Promise<PageResult> {
  await setJobExecutors(page.ctx, changedList(await getJobExecutors(page.ctx), page.form));
  return redirect(BASE);
}

/** The executor a form page edits: a new one of `?type=`, or the one at path index `:index`. */
async function edited(page: PageContext): Promise<{ executors: JobExecutor[]; index: number | null; executor: JobExecutor }> {
  const executors = await getJobExecutors(page.ctx);
  if (page.params.index === undefined) {
    const type = (page.query.type ?? page.form.type) as JobExecutorType;
    if (!JOB_EXECUTOR_TYPES.includes(type)) throw new NotFound(`Unknown job executor type: ${type ?? ''}`);
    return { executors, index: null, executor: newJobExecutor(type, '') };
  }
  const index = Number(page.params.index);
  const executor = /^\d{1,4}$/.test(page.params.index) ? executors[index] : undefined;
  if (!executor) throw new NotFound(`Page not found: ${page.request.url.split('?')[0]}`);
  return { executors, index, executor };
}

async function formPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const { index, executor } = await edited(page);
  const shown = error ? fromForm(page.form, executor) : executor;
  const type = executor['@type'];
  const title = index === null ? `New ${TYPE_NAMES[type].toLowerCase()}` : `Job executor ${executor.name}`;
  const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
  return (
    <SettingsLayout page={page} area="administration" section="job-executors" title={title} error={error}>
      <PostForm page={page} action={index === null ? `${BASE}/new?type=${type}` : `${BASE}/${index}`} class="settings-form" label={title}>
        <input type="hidden" name="type" value={type} />
        <Field name="name" label="Name (letters, digits and -)" value={text(shown.name)} required autocomplete="off" />
        <Checkbox name="enabled" label="Enabled" checked={shown.enabled} />
        <Field name="jobRequirement" label="Job requirement (a job match; empty for any job)" value={text(shown.jobRequirement)} autocomplete="off" />
        {isRemoteExecutor(shown) && (
          <Field
            name="agentQuery"
            label={'Agent selector (an agent query of fields and attributes, such as "Os" is "Linux" and has attribute "gpu"; empty for any agent)'}
            value={text(shown.agentQuery)}
            autocomplete="off"
          />
        )}
        <Field
          name="concurrency"
          label={
            isRemoteExecutor(shown)
              ? "Concurrency (jobs at once on each agent; empty for the agent's number of CPUs)"
              : 'Concurrency (jobs at once in a server process; empty for the number of CPUs)'
          }
          value={text(shown.concurrency)}
        />
        {isDockerExecutor(shown) && <DockerFields executor={shown} text={text} />}
        <Field name="cacheTTL" label="Cache TTL (days an unused job cache is kept)" value={text(shown.cacheTTL)} required />
        <p>
          <button type="submit" class="primary">
            Save job executor
          </button>
        </p>
      </PostForm>
    </SettingsLayout>
  );
}

/** The fields of a docker executor (server or remote): limits, engine socket and registry logins (one empty row to add one). */
function DockerFields({ executor, text }: { executor: ServerDockerExecutor | RemoteDockerExecutor; text: (value: unknown) => string }) {
  const engine = executor['@type'] === 'RemoteDockerExecutor' ? "the agent's container engine" : "the server's container engine";
  const logins = [...executor.registryLogins, { registryUrl: null, userName: '', password: '' }];
  return (
    <>
      <Field name="cpuLimit" label="CPU limit of the job's containers (such as 1.5; empty for none)" value={text(executor.cpuLimit)} />
      <Field
        name="memoryLimit"
        label="Memory limit of the job's containers (such as 512m or 2g; empty for the job sandbox's)"
        value={text(executor.memoryLimit)}
      />
      <Field name="dockerSockPath" label={`Docker sock path (empty for ${engine})`} value={text(executor.dockerSockPath)} />
      <fieldset>
        <legend>Registry logins (leave the user name empty to remove one; an empty password keeps the one stored)</legend>
        {logins.map((login, i) => (
          <div key={i} class="registry-login">
            <Field name={`registryUrl.${i}`} label={`Registry ${i + 1} URL (empty for the official registry)`} value={text(login.registryUrl)} />
            <Field name={`userName.${i}`} label={`Registry ${i + 1} user name`} value={login.userName} autocomplete="off" />
            <Field name={`password.${i}`} label={`Registry ${i + 1} password`} type="password" autocomplete="new-password" />
          </div>
        ))}
      </fieldset>
    </>
  );
}

/** A whole number given as digits, else the text itself (refused by the domain's check with its message). */
const numberOrText = (value: string | undefined): number | string => (/^\d{1,9}$/.test(value?.trim() ?? '') ? Number(value) : (value ?? ''));

/**
 * The executor a submitted form describes, on top of `before` (its current settings): texts as
 * given, a registry password left empty keeping the stored one of the same row.
 */
function fromForm(form: Record<string, string>, before: JobExecutor): JobExecutor {
  const base = {
    ...before,
    name: form.name ?? '',
    enabled: checked(form, 'enabled'),
    jobRequirement: form.jobRequirement ?? null,
    concurrency: form.concurrency ?? null,
    cacheTTL: numberOrText(form.cacheTTL),
    ...(isRemoteExecutor(before) && { agentQuery: (form.agentQuery ?? '').trim() === '' ? null : form.agentQuery }),
  } as unknown as JobExecutor;
  if (!isDockerExecutor(base)) return base;
  const stored = (before as ServerDockerExecutor | RemoteDockerExecutor).registryLogins;
  const registryLogins = [];
  for (let i = 0; form[`userName.${i}`] !== undefined; i++) {
    const userName = form[`userName.${i}`];
    if (userName.trim() === '') continue;
    const password = form[`password.${i}`] || stored[i]?.password || '';
    registryLogins.push({ registryUrl: form[`registryUrl.${i}`] ?? null, userName, password });
  }
  return { ...base, cpuLimit: form.cpuLimit ?? null, memoryLimit: form.memoryLimit ?? null, dockerSockPath: form.dockerSockPath ?? null, registryLogins };
}

async function saveExecutor(page: PageContext): Promise<PageResult> {
  const { executors, index, executor } = await edited(page);
  const list = [...executors];
  if (index === null) list.push(fromForm(page.form, executor));
  else list[index] = fromForm(page.form, executor);
  await setJobExecutors(page.ctx, list);
  return redirect(BASE);
}

export const jobExecutorAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/job-executors', (page) => listPage(page)),
    settingsPost('administration', '/job-executors', changeList, (page, message) => listPage(page, message)),
    settingsRoute('administration', 'GET', '/job-executors/new', (page) => formPage(page)),
    settingsPost('administration', '/job-executors/new', saveExecutor, (page, message) => formPage(page, message)),
    settingsRoute('administration', 'GET', '/job-executors/:index', (page) => formPage(page)),
    settingsPost('administration', '/job-executors/:index', saveExecutor, (page, message) => formPage(page, message)),
  ],
};
