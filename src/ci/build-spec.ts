/**
 * Parsing and validation of `.onedev-buildspec.yml` (docs/compatibility.md#builds-build-spec), limited to the
 * "minimal useful subset" Gitloom runs with its shell executor: jobs, steps (checkout, command
 * without container, publish artifacts, set build version/description), step conditions,
 * param specs (text, boolean, choice), job dependencies, triggers, timeout, retries,
 * `!RunJobAction` post-build actions and secret references. Anything else gets a clear
 * validation message; all messages of one spec are reported together in a {@link BuildSpecError}.
 */
import { QuerySyntaxError } from '../query/index.js';
import { CronSyntaxError, validateCron } from './cron.js';
import { conditionParams, parseCondition, type Condition } from './conditions.js';
import { parsePatternSet, PatternSyntaxError } from './patterns.js';
import { readParamSpec, readSupplies } from './spec-params.js';
import { asMap, MapReader, parseYamlTree, Problems, type SpecNode } from './spec-reader.js';
import type {
  BuildImageStep,
  BuildSpec,
  CheckoutStep,
  JobCache,
  RunContainerStep,
  JobService,
  CloneCredential,
  CommandStep,
  Interpreter,
  Job,
  JobDependency,
  JobTrigger,
  ParamSupply,
  PostBuildAction,
  RegistryLoginSpec,
  Step,
  StepCondition,
} from './spec-types.js';
import { scanVariables, VariableError, type VariableRef } from './variables.js';

export type * from './spec-types.js';

/** The newest build spec version Gitloom reads: OneDev 8.6.13's (docs/compatibility.md#builds-build-spec). */
export const MAX_SPEC_VERSION = 25;

/** File name of the build spec at the repository root. */
export const BUILD_SPEC_FILE = '.onedev-buildspec.yml';
/** Legacy file name, read when {@link BUILD_SPEC_FILE} is absent. */
export const LEGACY_BUILD_SPEC_FILE = '.onedev-buildspec';

/**
 * An invalid build spec. `messages` lists every problem (each prefixed with its line and
 * location); `message` joins them, ready to be written to the build log.
 */
export class BuildSpecError extends Error {
  /**
   * @param partial what could still be read of an invalid spec (jobs and their readable triggers),
   *   so an event can tell which jobs it would have run; null when the YAML itself is unreadable.
   */
  constructor(
    readonly messages: readonly string[],
    readonly partial: BuildSpec | null = null,
  ) {
    super(`Invalid build spec:\n${messages.map((m) => `  - ${m}`).join('\n')}`);
    this.name = 'BuildSpecError';
  }
}

const STEP_CONDITIONS: readonly StepCondition[] = ['ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL', 'ALWAYS', 'NEVER'];
const SUPPORTED_STEPS = '!CheckoutStep, !CommandStep, !RunContainerStep, !BuildImageStep, !PublishArtifactStep, !SetBuildVersionStep, !SetBuildDescriptionStep';
const SUPPORTED_TRIGGERS =
  '!BranchUpdateTrigger, !TagCreateTrigger, !PullRequestUpdateTrigger, !PullRequestMergeTrigger, !PullRequestDiscardTrigger, !DependencyFinishedTrigger, !ScheduleTrigger';

/** An interpolated field to check once all params and properties are known. */
interface Interpolated {
  readonly where: string;
  readonly node: SpecNode | null;
  readonly text: string;
}

/** Per-job facts gathered while reading, used by the cross-job checks. */
interface JobDraft {
  job: Job;
  node: SpecNode;
  where: string;
  interpolated: Interpolated[];
  secretNames: Set<string>;
}

/**
 * Parses and validates a build spec.
 *
 * @param text the YAML text of `.onedev-buildspec.yml`.
 * @returns the typed spec with reference defaults filled in.
 * @throws BuildSpecError for bad YAML or any validation failure — never anything else for bad input.
 * @example parseBuildSpec('version: 25\njobs:\n- name: CI\n  steps: []').jobs[0].timeout === 3600
 */
export function parseBuildSpec(text: string): BuildSpec {
  const { root, errors } = parseYamlTree(text);
  if (errors.length > 0) throw new BuildSpecError(errors);
  if (!root) throw new BuildSpecError(['Build spec is empty']);
  const problems = new Problems();
  const top = asMap(root, '', problems);
  if (!top) throw new BuildSpecError(problems.messages);

  const version = top.optionalInteger('version', 0);
  if (version === null && !top.raw('version')) problems.add('', root, "'version' is required");
  if (version !== null && version > MAX_SPEC_VERSION) {
    // A newer OneDev's spec (e.g. steps as `type: CommandStep`): one message, not one per step.
    throw new BuildSpecError([`Build spec version ${version} is newer than this server supports (max ${MAX_SPEC_VERSION})`]);
  }
  const properties: { name: string; value: string }[] = [];
  top.list('properties').forEach((n, i) => {
    const r = asMap(n, `properties[${i}]`, problems);
    if (!r) return;
    const name = r.string('name', { required: true });
    const value = r.string('value') ?? '';
    r.ignore('archived');
    r.finish();
    if (name === null) return;
    if (properties.some((p) => p.name === name)) r.problems.add(r.where, n, `duplicate property name '${name}'`);
    properties.push({ name, value });
  });
  // Constructs this server does not read are said once, before anything they would cause.
  const unsupported = new Problems();
  for (const key of ['imports', 'stepTemplates'] as const) {
    if (top.list(key).length > 0) unsupported.add('', top.raw(key), `'${key}' is not supported`);
  }
  if (unsupported.messages.length > 0) throw new BuildSpecError(unsupported.messages);
  const services = top.list('services').flatMap((n, i) => {
    const service = readService(n, `services[${i}]`, problems);
    return service ? [service] : [];
  });
  const drafts = top.list('jobs').flatMap((n, i) => {
    const d = readJob(n, i, problems);
    return d ? [d] : [];
  });
  top.finish();
  attachServices(drafts, services, problems);
  crossCheck(drafts, properties, problems);
  const spec = { version: version ?? 0, jobs: drafts.map((d) => d.job), properties };
  if (problems.messages.length > 0) throw new BuildSpecError(problems.messages, spec);
  return spec;
}

function readJob(node: SpecNode, index: number, problems: Problems): JobDraft | null {
  const r = asMap(node, `jobs[${index}]`, problems);
  if (!r) return null;
  const name = r.string('name', { required: true }) ?? '';
  const where = `jobs[${index}] "${name}"`;
  const jr = new MapReader(r.node, where, problems);
  jr.raw('name');
  const interpolated: Interpolated[] = [];
  const secretNames = new Set<string>();
  const steps = jr.list('steps').flatMap((n, i) => {
    const s = readStep(n, `${where} › steps[${i}]`, problems, interpolated, secretNames);
    return s ? [s] : [];
  });
  const paramSpecs = jr.list('paramSpecs').flatMap((n, i) => {
    const p = readParamSpec(n, `${where} › paramSpecs[${i}]`, problems);
    return p ? [p] : [];
  });
  const jobDependencies = jr.list('jobDependencies').flatMap((n, i) => {
    const d = readDependency(n, `${where} › jobDependencies[${i}]`, problems, secretNames);
    return d ? [d] : [];
  });
  const triggers = jr.list('triggers').flatMap((n, i) => {
    const t = readTrigger(n, `${where} › triggers[${i}]`, problems, secretNames);
    return t ? [t] : [];
  });
  const caches = jr.list('caches').flatMap((n, i) => {
    const c = readCache(n, `${where} › caches[${i}]`, problems, interpolated);
    return c ? [c] : [];
  });
  const postBuildActions = jr.list('postBuildActions').flatMap((n, i) => {
    const a = readAction(n, `${where} › postBuildActions[${i}]`, problems, secretNames);
    return a ? [a] : [];
  });
  if (jr.list('projectDependencies').length > 0) problems.add(where, jr.raw('projectDependencies'), "'projectDependencies' is not supported");
  const requiredServices = jr.list('requiredServices').flatMap((n, i) => {
    if (n.kind === 'scalar' && n.value !== null && n.value !== '') return [String(n.value)];
    problems.add(`${where} › requiredServices[${i}]`, n, 'expected a service name');
    return [];
  });
  const retryCondition = jr.string('retryCondition') ?? 'never';
  const retryConditionAst = condition(retryCondition, 'retry', `${where} › retryCondition`, jr.raw('retryCondition') ?? node, problems);
  const job: Job = {
    name,
    jobExecutor: jr.string('jobExecutor'),
    steps,
    paramSpecs,
    jobDependencies,
    triggers,
    caches,
    services: requiredServices.map((name) => ({ name, image: '', arguments: null, envVars: [], readinessCheckCommand: '' })),
    timeout: jr.integer('timeout', 3600, 1),
    postBuildActions,
    retryCondition,
    retryConditionAst,
    maxRetries: jr.integer('maxRetries', 3, 0),
    retryDelay: jr.integer('retryDelay', 30, 0),
    secretRefs: [],
  };
  jr.ignore('cpuRequirement', 'memoryRequirement');
  jr.finish();
  return { job, node, where, interpolated, secretNames };
}

function condition(source: string, kind: 'action' | 'retry', where: string, node: SpecNode, problems: Problems): Condition {
  try {
    return parseCondition(source, kind);
  } catch (e) {
    if (!(e instanceof QuerySyntaxError)) throw e;
    problems.add(where, node, `invalid condition '${source}': ${e.message}`);
    return { type: 'never' };
  }
}

function tagged(node: SpecNode, where: string, what: string, problems: Problems): string | null {
  if (!node.tag) {
    problems.add(where, node, `${what} needs a type tag such as ${what === 'step' ? '!CommandStep' : '!BranchUpdateTrigger'}`);
    return null;
  }
  return node.tag.slice(1);
}

/** One step being read: its map, place, node, name and condition; `interp` collects a field's text for the `@...@` check. */
interface StepReading {
  sr: MapReader;
  w: string;
  node: SpecNode;
  base: { name: string; condition: StepCondition };
  problems: Problems;
  interp: (key: string, text: string | null) => void;
  /** Names of the job secrets the job's steps use. */
  secrets: Set<string>;
}

function readStep(node: SpecNode, where: string, problems: Problems, interpolated: Interpolated[], secrets: Set<string>): Step | null {
  const type = tagged(node, where, 'step', problems);
  if (!type) return null;
  const r = asMap(node, where, problems);
  if (!r) return null;
  const name = r.string('name', { required: true }) ?? '';
  const w = `${where} "${name}"`;
  const sr = new MapReader(r.node, w, problems);
  sr.raw('name');
  const condText = sr.string('condition') ?? 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL';
  let cond: StepCondition = 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL';
  if ((STEP_CONDITIONS as readonly string[]).includes(condText)) cond = condText as StepCondition;
  else problems.add(`${w} › condition`, sr.raw('condition'), `unknown step condition '${condText}' (expected ${STEP_CONDITIONS.join(', ')})`);
  const interp = (key: string, text: string | null): void => {
    if (text !== null) interpolated.push({ where: `${w} › ${key}`, node: sr.raw(key) ?? node, text });
  };
  const reading: StepReading = { sr, w, node, base: { name, condition: cond }, problems, interp, secrets };
  let step: Step | null = null;
  switch (type) {
    case 'CheckoutStep':
      step = readCheckoutStep(reading);
      break;
    case 'CommandStep':
      step = readCommandStep(reading);
      break;
    case 'RunContainerStep':
      step = readRunContainerStep(reading);
      break;
    case 'BuildImageStep':
      step = readBuildImageStep(reading);
      break;
    case 'PublishArtifactStep': {
      const sourcePath = sr.string('sourcePath');
      const artifacts = sr.string('artifacts', { required: true }) ?? '';
      interp('sourcePath', sourcePath);
      interp('artifacts', artifacts);
      checkPatterns(artifacts, `${w} › artifacts`, sr.raw('artifacts') ?? node, problems);
      step = { type, name, condition: cond, sourcePath, artifacts };
      break;
    }
    case 'SetBuildVersionStep': {
      const buildVersion = sr.string('buildVersion', { required: true }) ?? '';
      interp('buildVersion', buildVersion);
      step = { type, name, condition: cond, buildVersion };
      break;
    }
    case 'SetBuildDescriptionStep': {
      const buildDescription = sr.string('buildDescription', { required: true }) ?? '';
      interp('buildDescription', buildDescription);
      step = { type, name, condition: cond, buildDescription };
      break;
    }
    default:
      problems.add(where, node, `unsupported step type '!${type}' (supported: ${SUPPORTED_STEPS})`);
      return null;
  }
  sr.finish();
  return step;
}

function readCheckoutStep({ sr, w, base, problems, interp, secrets }: StepReading): CheckoutStep {
  const cloneDepth = sr.optionalInteger('cloneDepth', 1);
  const checkoutPath = sr.string('checkoutPath');
  interp('checkoutPath', checkoutPath);
  return {
    type: 'CheckoutStep',
    ...base,
    cloneCredential: readCredential(sr, w, problems, secrets),
    withLfs: sr.boolean('withLfs', false),
    withSubmodules: sr.boolean('withSubmodules', false),
    cloneDepth,
    checkoutPath,
  };
}

function readCommandStep(reading: StepReading): CommandStep {
  const { sr, w, node, base, problems, interp } = reading;
  const runInContainer = sr.boolean('runInContainer', true);
  const image = sr.string('image');
  const registryLogins = readRegistryLogins(reading);
  sr.ignore('runAs');
  if (runInContainer && !image?.trim()) problems.add(w, node, 'image is required when runInContainer is true');
  interp('image', image);
  const interpreter = readInterpreter(sr, w, problems);
  if (interpreter) interp('interpreter', interpreter.commands);
  const envVars = readEnvVars(sr, w, problems);
  for (const e of envVars) interp('envVars', e.value);
  return {
    type: 'CommandStep',
    ...base,
    runInContainer,
    image: runInContainer ? (image ?? '') : null,
    interpreter: interpreter ?? { type: 'DefaultInterpreter', commands: '' },
    envVars,
    useTTY: sr.boolean('useTTY', false),
    registryLogins: runInContainer ? registryLogins : [],
  };
}

/**
 * A `caches` item: `key` (interpolated; what is not a letter, digit, `-`, `_` or `.` becomes `-`,
 * as OneDev normalizes it) and `path` (interpolated; relative to the workspace, or absolute for a
 * path of the job's containers), both required; `path` may not be the workspace itself.
 */
function readCache(node: SpecNode, where: string, problems: Problems, interpolated: Interpolated[]): JobCache | null {
  const r = asMap(node, where, problems);
  if (!r) return null;
  const key = r.string('key', { required: true });
  const cachePath = r.string('path', { required: true });
  r.finish();
  if (key === null || cachePath === null) return null;
  interpolated.push({ where: `${where} › key`, node, text: key }, { where: `${where} › path`, node, text: cachePath });
  if (/^[./\\]*$/.test(cachePath)) problems.add(where, node, `invalid cache path '${cachePath}'`);
  return { key, path: cachePath };
}

/** A `!RunContainerStep` (src/ci/spec-types.ts): its image required, its paths absolute in the container. */
function readRunContainerStep(reading: StepReading): RunContainerStep {
  const { sr, w, node, base, problems, interp } = reading;
  const image = sr.string('image', { required: true }) ?? '';
  const args = sr.string('args');
  const workingDir = sr.string('workingDir');
  for (const [key, text] of [
    ['image', image],
    ['args', args],
    ['workingDir', workingDir],
  ] as const)
    interp(key, text);
  const envVars = readEnvVars(sr, w, problems);
  for (const e of envVars) interp('envVars', e.value);
  const volumeMounts = sr.list('volumeMounts').flatMap((n, i) => {
    const mr = asMap(n, `${w} › volumeMounts[${i}]`, problems);
    if (!mr) return [];
    const sourcePath = mr.string('sourcePath');
    const targetPath = mr.string('targetPath', { required: true });
    mr.finish();
    if (targetPath === null) return [];
    interp('volumeMounts', sourcePath);
    interp('volumeMounts', targetPath);
    return [{ sourcePath, targetPath }];
  });
  if (workingDir !== null && !workingDir.startsWith('/') && !workingDir.includes('@'))
    problems.add(w, node, `workingDir must be an absolute path in the container: '${workingDir}'`);
  const useTTY = sr.boolean('useTTY', false);
  return { type: 'RunContainerStep', ...base, image, args, envVars, workingDir, volumeMounts, useTTY, registryLogins: readRegistryLogins(reading) };
}

/** A `!BuildImageStep` (src/ci/spec-types.ts): `tags` required; paths relative to the workspace. */
function readBuildImageStep(reading: StepReading): BuildImageStep {
  const { sr, base, interp } = reading;
  const texts = {
    buildPath: sr.string('buildPath'),
    dockerfile: sr.string('dockerfile'),
    tags: sr.string('tags', { required: true }) ?? '',
    moreOptions: sr.string('moreOptions'),
  };
  for (const [key, text] of Object.entries(texts)) interp(key, text);
  return {
    type: 'BuildImageStep',
    ...base,
    ...texts,
    publish: sr.boolean('publish', true),
    removeDanglingImages: sr.boolean('removeDanglingImages', true),
    registryLogins: readRegistryLogins(reading),
  };
}

/**
 * A container step's `registryLogins` (`registryUrl`, `userName` and `passwordSecret`, the name of
 * a job secret, which the job then needs); the URL and user name are interpolated.
 */
function readRegistryLogins({ sr, w, problems, interp, secrets }: StepReading): RegistryLoginSpec[] {
  return sr.list('registryLogins').flatMap((n, i) => {
    const r = asMap(n, `${w} › registryLogins[${i}]`, problems);
    if (!r) return [];
    const registryUrl = r.string('registryUrl');
    const userName = r.string('userName', { required: true });
    const passwordSecret = r.string('passwordSecret', { required: true });
    r.finish();
    if (userName === null || passwordSecret === null) return [];
    interp('registryLogins', registryUrl);
    interp('registryLogins', userName);
    secrets.add(passwordSecret);
    return [{ registryUrl: registryUrl?.trim() || null, userName, passwordSecret }];
  });
}

/** An `envVars` list (`name`, `value`): names must be shell variable names. */
function readEnvVars(r: MapReader, where: string, problems: Problems): Array<{ name: string; value: string }> {
  return r.list('envVars').flatMap((n, i) => {
    const er = asMap(n, `${where} › envVars[${i}]`, problems);
    if (!er) return [];
    const envName = er.string('name', { required: true });
    const value = er.string('value') ?? '';
    er.finish();
    if (envName === null) return [];
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(envName)) problems.add(er.where, n, `invalid environment variable name '${envName}'`);
    return [{ name: envName, value }];
  });
}

/**
 * A top-level `services` item: `name` (a host name: what steps connect to), `image`,
 * `readinessCheckCommand` (required), `arguments` and `envVars`; the texts are interpolated in
 * the context of each job that requires the service.
 */
function readService(
  node: SpecNode,
  where: string,
  problems: Problems,
): { service: JobService; node: SpecNode; where: string; interpolated: Interpolated[] } | null {
  const r = asMap(node, where, problems);
  if (!r) return null;
  const name = r.string('name', { required: true });
  const image = r.string('image', { required: true });
  const readinessCheckCommand = r.string('readinessCheckCommand', { required: true });
  const args = r.string('arguments');
  const envVars = readEnvVars(r, where, problems);
  r.ignore('cpuRequirement', 'memoryRequirement');
  r.finish();
  if (name === null || image === null || readinessCheckCommand === null) return null;
  if (!/^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(name))
    problems.add(where, node, `service name '${name}' is not a host name (letters, digits and '-')`);
  const interpolated: Interpolated[] = [image, readinessCheckCommand, args, ...envVars.map((e) => e.value)].flatMap((text) =>
    text === null ? [] : [{ where, node, text }],
  );
  return { service: { name, image, arguments: args, envVars, readinessCheckCommand }, node, where, interpolated };
}

/**
 * Gives each job the services its `requiredServices` names (refusing unknown and duplicate
 * names), and the services' interpolated texts to check in the job's context.
 */
function attachServices(drafts: JobDraft[], services: NonNullable<ReturnType<typeof readService>>[], problems: Problems): void {
  const byName = new Map<string, NonNullable<ReturnType<typeof readService>>>();
  for (const s of services) {
    if (byName.has(s.service.name)) problems.add(s.where, s.node, `duplicate service name '${s.service.name}'`);
    byName.set(s.service.name, s);
  }
  for (const d of drafts) {
    const required = d.job.services.map((s) => s.name);
    const found = required.flatMap((name) => {
      const s = byName.get(name);
      if (!s) problems.add(d.where, d.node, `required service '${name}' not found`);
      return s ? [s] : [];
    });
    if (new Set(required).size !== required.length) problems.add(d.where, d.node, 'a service is required twice');
    for (const s of found) d.interpolated.push(...s.interpolated);
    d.job = { ...d.job, services: found.map((s) => s.service) };
  }
}

function readCredential(sr: MapReader, where: string, problems: Problems, secrets: Set<string>): CloneCredential {
  const n = sr.raw('cloneCredential');
  if (!n) return { type: 'DefaultCredential' };
  const w = `${where} › cloneCredential`;
  const r = asMap(n, w, problems);
  if (!r) return { type: 'DefaultCredential' };
  let cred: CloneCredential = { type: 'DefaultCredential' };
  switch (n.tag) {
    case '!DefaultCredential':
      break;
    case '!HttpCredential': {
      const s = r.string('accessTokenSecret', { required: true });
      if (s) {
        secrets.add(s);
        cred = { type: 'HttpCredential', accessTokenSecret: s };
      }
      break;
    }
    case '!SshCredential': {
      const s = r.string('keySecret', { required: true });
      if (s) {
        secrets.add(s);
        cred = { type: 'SshCredential', keySecret: s };
      }
      break;
    }
    default:
      problems.add(w, n, `unsupported clone credential '${n.tag ?? '(no tag)'}' (supported: !DefaultCredential, !HttpCredential, !SshCredential)`);
  }
  r.finish();
  return cred;
}

function readInterpreter(sr: MapReader, where: string, problems: Problems): Interpreter | null {
  const n = sr.raw('interpreter');
  const w = `${where} › interpreter`;
  if (!n) {
    problems.add(where, sr.node, "'interpreter' is required (!DefaultInterpreter or !ShellInterpreter)");
    return null;
  }
  const r = asMap(n, w, problems);
  if (!r) return null;
  const commandsNode = r.raw('commands');
  let commands = '';
  if (!commandsNode) problems.add(w, n, "'commands' is required");
  else if (commandsNode.kind === 'scalar') commands = commandsNode.text;
  else if (commandsNode.kind === 'seq' && commandsNode.items.every((i) => i.kind === 'scalar')) {
    commands = commandsNode.items.map((i) => (i.kind === 'scalar' ? i.text : '')).join('\n');
  } else problems.add(`${w} › commands`, commandsNode, 'expected a list of lines or a text block');
  let result: Interpreter | null = null;
  if (n.tag === '!DefaultInterpreter') result = { type: 'DefaultInterpreter', commands };
  else if (n.tag === '!ShellInterpreter') {
    const shell = r.string('shell', { required: true }) ?? 'sh';
    if (/\s/.test(shell) || shell.startsWith('-')) problems.add(`${w} › shell`, r.raw('shell') ?? n, `invalid shell '${shell}'`);
    result = { type: 'ShellInterpreter', shell, commands };
  } else {
    problems.add(w, n, `unsupported interpreter '${n.tag ?? '(no tag)'}' (supported: !DefaultInterpreter, !ShellInterpreter)`);
  }
  r.finish();
  return result;
}

function readDependency(node: SpecNode, where: string, problems: Problems, secrets: Set<string>): JobDependency | null {
  const r = asMap(node, where, problems);
  if (!r) return null;
  const jobName = r.string('jobName', { required: true });
  const artifactsNode = r.node.entries.get('artifacts');
  const artifacts = artifactsNode === undefined ? '**' : r.string('artifacts');
  if (artifacts !== null) checkPatterns(artifacts, `${where} › artifacts`, artifactsNode ?? node, problems);
  const destinationPath = r.string('destinationPath');
  if (destinationPath !== null && !isSafeRelative(destinationPath)) {
    problems.add(`${where} › destinationPath`, r.raw('destinationPath'), 'must be a relative path inside the workspace');
  }
  const dep: JobDependency = {
    jobName: jobName ?? '',
    requireSuccessful: r.boolean('requireSuccessful', true),
    jobParams: readSupplies(r, 'jobParams', where, problems, secrets, true),
    artifacts,
    destinationPath,
  };
  r.finish();
  return jobName === null ? null : dep;
}

function readTrigger(node: SpecNode, where: string, problems: Problems, secrets: Set<string>): JobTrigger | null {
  let type = tagged(node, where, 'trigger', problems);
  if (!type) return null;
  const r = asMap(node, where, problems);
  if (!r) return null;
  const projects = patternsField(r, 'projects', where, problems);
  const params = [...readSupplies(r, 'params', where, problems, secrets, false), ...readSupplies(r, 'paramMatrix', where, problems, secrets, false)];
  if (r.list('excludeParamMaps').length > 0) problems.add(where, r.raw('excludeParamMaps'), "'excludeParamMaps' is not supported");
  let trigger: JobTrigger;
  if (type === 'PullRequestTrigger') type = 'PullRequestUpdateTrigger';
  switch (type) {
    case 'BranchUpdateTrigger':
      trigger = { type, projects, params, branches: patternsField(r, 'branches', where, problems), paths: patternsField(r, 'paths', where, problems) };
      break;
    case 'TagCreateTrigger':
      trigger = { type, projects, params, tags: patternsField(r, 'tags', where, problems), branches: patternsField(r, 'branches', where, problems) };
      break;
    case 'PullRequestUpdateTrigger':
    case 'PullRequestMergeTrigger':
    case 'PullRequestDiscardTrigger':
      trigger = { type, projects, params, branches: patternsField(r, 'branches', where, problems), paths: patternsField(r, 'paths', where, problems) };
      break;
    case 'DependencyFinishedTrigger':
      trigger = { type, projects, params };
      break;
    case 'ScheduleTrigger': {
      const cronExpression = r.string('cronExpression', { required: true }) ?? '';
      if (cronExpression) {
        try {
          validateCron(cronExpression);
        } catch (e) {
          if (!(e instanceof CronSyntaxError)) throw e;
          problems.add(`${where} › cronExpression`, r.raw('cronExpression'), e.message);
        }
      }
      trigger = { type, projects, params, cronExpression };
      break;
    }
    default:
      problems.add(where, node, `unsupported trigger type '!${type}' (supported: ${SUPPORTED_TRIGGERS})`);
      return null;
  }
  r.finish();
  return trigger;
}

function readAction(node: SpecNode, where: string, problems: Problems, secrets: Set<string>): PostBuildAction | null {
  if (node.tag !== '!RunJobAction') {
    problems.add(where, node, `unsupported post-build action '${node.tag ?? '(no tag)'}' (supported: !RunJobAction)`);
    return null;
  }
  const r = asMap(node, where, problems);
  if (!r) return null;
  const source = r.string('condition') ?? 'always';
  const conditionAst = condition(source, 'action', `${where} › condition`, r.raw('condition') ?? node, problems);
  const jobName = r.string('jobName', { required: true });
  const jobParams = readSupplies(r, 'jobParams', where, problems, secrets, true);
  r.finish();
  return jobName === null ? null : { type: 'RunJobAction', condition: source, conditionAst, jobName, jobParams };
}

function patternsField(r: MapReader, key: string, where: string, problems: Problems): string | null {
  const v = r.string(key);
  if (v !== null) checkPatterns(v, `${where} › ${key}`, r.raw(key) ?? r.node, problems);
  return v;
}

function checkPatterns(text: string, where: string, node: SpecNode, problems: Problems): void {
  try {
    parsePatternSet(text);
  } catch (e) {
    if (!(e instanceof PatternSyntaxError)) throw e;
    problems.add(where, node, e.message);
  }
}

function isSafeRelative(p: string): boolean {
  return !p.startsWith('/') && !p.includes('\0') && !p.split(/[\\/]/).includes('..');
}

function crossCheck(drafts: JobDraft[], properties: { name: string }[], problems: Problems): void {
  const byName = new Map<string, JobDraft>();
  for (const d of drafts) {
    if (d.job.name === '') continue;
    if (byName.has(d.job.name)) problems.add(d.where, d.node, `duplicate job name '${d.job.name}'`);
    else byName.set(d.job.name, d);
  }
  for (const d of drafts) {
    const job = d.job;
    const paramNames = new Set<string>();
    for (const p of job.paramSpecs) {
      if (paramNames.has(p.name)) problems.add(d.where, d.node, `duplicate param name '${p.name}'`);
      paramNames.add(p.name);
    }
    const stepNames = new Set<string>();
    for (const s of job.steps) {
      if (s.name && stepNames.has(s.name)) problems.add(d.where, d.node, `duplicate step name '${s.name}'`);
      stepNames.add(s.name);
    }
    const depNames = new Set<string>();
    for (const dep of job.jobDependencies) {
      if (depNames.has(dep.jobName)) problems.add(d.where, d.node, `duplicate dependency '${dep.jobName}'`);
      depNames.add(dep.jobName);
      checkSupplies(dep.jobParams, byName.get(dep.jobName), paramNames, `${d.where} › dependency '${dep.jobName}'`, d.node, problems);
      if (!byName.has(dep.jobName)) problems.add(d.where, d.node, `dependency job '${dep.jobName}' not found`);
    }
    for (const t of job.triggers) {
      for (const s of t.params) {
        if (!paramNames.has(s.name)) problems.add(`${d.where} › triggers`, d.node, `trigger supplies undeclared param '${s.name}'`);
      }
      if (t.type === 'DependencyFinishedTrigger' && job.jobDependencies.length === 0) {
        problems.add(`${d.where} › triggers`, d.node, '!DependencyFinishedTrigger needs jobDependencies');
      }
    }
    for (const a of job.postBuildActions) {
      if (!byName.has(a.jobName)) problems.add(`${d.where} › postBuildActions`, d.node, `job '${a.jobName}' of !RunJobAction not found`);
      checkSupplies(a.jobParams, byName.get(a.jobName), paramNames, `${d.where} › postBuildActions`, d.node, problems);
      for (const p of conditionParams(a.conditionAst)) {
        if (!paramNames.has(p)) problems.add(`${d.where} › postBuildActions`, d.node, `condition refers to undeclared param '${p}'`);
      }
    }
    for (const p of conditionParams(job.retryConditionAst)) {
      if (!paramNames.has(p)) problems.add(`${d.where} › retryCondition`, d.node, `condition refers to undeclared param '${p}'`);
    }
    for (const item of d.interpolated) {
      let refs: VariableRef[];
      try {
        refs = scanVariables(item.text);
      } catch (e) {
        if (!(e instanceof VariableError)) throw e;
        problems.add(item.where, item.node, e.message);
        continue;
      }
      for (const ref of refs) {
        if (ref.kind === 'param' && !paramNames.has(ref.name))
          problems.add(item.where, item.node, `@param:${ref.name}@ refers to undeclared param '${ref.name}'`);
        if (ref.kind === 'property' && !properties.some((p) => p.name === ref.name))
          problems.add(item.where, item.node, `@property:${ref.name}@ refers to undeclared property '${ref.name}'`);
        if (ref.kind === 'secret') d.secretNames.add(ref.name);
      }
    }
    d.job = { ...job, secretRefs: [...d.secretNames].sort() };
  }
  checkCycles(drafts, byName, problems);
}

function checkSupplies(
  supplies: readonly ParamSupply[],
  target: JobDraft | undefined,
  ownParams: Set<string>,
  where: string,
  node: SpecNode,
  problems: Problems,
): void {
  for (const s of supplies) {
    if (target && !target.job.paramSpecs.some((p) => p.name === s.name)) {
      problems.add(where, node, `job '${target.job.name}' has no param '${s.name}'`);
    }
    if (s.valuesProvider.type === 'PassthroughValues' && !ownParams.has(s.valuesProvider.paramName)) {
      problems.add(where, node, `passthrough of undeclared param '${s.valuesProvider.paramName}'`);
    }
  }
}

function checkCycles(drafts: JobDraft[], byName: Map<string, JobDraft>, problems: Problems): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const reported = new Set<string>();
  const visit = (name: string, trail: string[]): void => {
    const d = byName.get(name);
    if (!d) return;
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name];
      const key = [...cycle].sort().join('\0');
      if (!reported.has(key)) {
        reported.add(key);
        problems.add(d.where, d.node, `circular job dependencies: ${cycle.join(' → ')}`);
      }
      return;
    }
    state.set(name, 'visiting');
    for (const dep of d.job.jobDependencies) visit(dep.jobName, [...trail, name]);
    state.set(name, 'done');
  };
  for (const d of drafts) visit(d.job.name, []);
}
