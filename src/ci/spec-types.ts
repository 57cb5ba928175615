/**
 * Typed model of a parsed `.onedev-buildspec.yml` (docs/compatibility.md#builds-build-spec), restricted to the
 * subset Gitloom runs (command steps in containers or the job sandbox). Produced by `parseBuildSpec`
 * (src/ci/build-spec.ts); every default of OneDev is already filled in.
 */
import type { Condition } from './conditions.js';

/** Step condition names (docs/compatibility.md#builds-build-spec "Steps"). */
export type StepCondition = 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL' | 'ALWAYS' | 'NEVER';

interface StepBase {
  /** Step name (required by OneDev; used in log lines). */
  readonly name: string;
  /** When the step runs; default `ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL`. */
  readonly condition: StepCondition;
}

/** Clone credential of a checkout step; the secret fields name job secrets. */
export type CloneCredential =
  | { readonly type: 'DefaultCredential' }
  | { readonly type: 'HttpCredential'; readonly accessTokenSecret: string }
  | { readonly type: 'SshCredential'; readonly keySecret: string };

/** `!CheckoutStep`: clone the project and check out the build commit into the workspace. */
export interface CheckoutStep extends StepBase {
  readonly type: 'CheckoutStep';
  readonly cloneCredential: CloneCredential;
  readonly withLfs: boolean;
  readonly withSubmodules: boolean;
  /** Clone depth; `null` = full history. */
  readonly cloneDepth: number | null;
  /** Sub-directory of the workspace to check out into (interpolated); `null` = workspace root. */
  readonly checkoutPath: string | null;
}

/** Command interpreter of a `!CommandStep`. `commands` is the script text (lines joined by `\n`). */
export type Interpreter =
  { readonly type: 'DefaultInterpreter'; readonly commands: string } | { readonly type: 'ShellInterpreter'; readonly shell: string; readonly commands: string };

/**
 * `!CommandStep`: its commands in the step's `image` (`runInContainer: true`, OneDev's default)
 * or in the job sandbox on the server (`runInContainer: false`).
 */
export interface CommandStep extends StepBase {
  readonly type: 'CommandStep';
  readonly runInContainer: boolean;
  /** Image of a container step (interpolated); null when `runInContainer` is false. */
  readonly image: string | null;
  readonly interpreter: Interpreter;
  /** Extra environment variables; values are interpolated. */
  readonly envVars: readonly { readonly name: string; readonly value: string }[];
  readonly useTTY: boolean;
  /** Logins for pulling the step's image (null when `runInContainer` is false). */
  readonly registryLogins: readonly RegistryLoginSpec[];
}

/**
 * A `registryLogins` item of a container step: the registry (`registryUrl`: host and optional
 * port, or null for Docker Hub), the user and the job secret holding the password or token.
 */
export interface RegistryLoginSpec {
  readonly registryUrl: string | null;
  readonly userName: string;
  readonly passwordSecret: string;
}

/**
 * `!BuildImageStep`: builds an image from `dockerfile` (default `Dockerfile` of `buildPath`) with
 * `buildPath` (relative to the workspace; null = the workspace) as its context, tags it with each
 * of `tags` (whitespace-separated full references) and pushes them when `publish`.
 */
export interface BuildImageStep extends StepBase {
  readonly type: 'BuildImageStep';
  readonly buildPath: string | null;
  readonly dockerfile: string | null;
  readonly tags: string;
  readonly publish: boolean;
  readonly removeDanglingImages: boolean;
  /** Extra `docker build` options; only the ones listed in docs/compatibility.md#builds-images are accepted. */
  readonly moreOptions: string | null;
  readonly registryLogins: readonly RegistryLoginSpec[];
}

/** `!PublishArtifactStep`: copy workspace files matching `artifacts` (relative to `sourcePath`). */
export interface PublishArtifactStep extends StepBase {
  readonly type: 'PublishArtifactStep';
  /** Directory relative to the workspace (interpolated); `null` = workspace root. */
  readonly sourcePath: string | null;
  /** Pattern set (interpolated), e.g. `*.zip dist/**`. */
  readonly artifacts: string;
}

/** `!SetBuildVersionStep`. */
export interface SetBuildVersionStep extends StepBase {
  readonly type: 'SetBuildVersionStep';
  /** Interpolated, e.g. `@file:buildVersion@`. */
  readonly buildVersion: string;
}

/** `!SetBuildDescriptionStep`. */
export interface SetBuildDescriptionStep extends StepBase {
  readonly type: 'SetBuildDescriptionStep';
  /** Interpolated markdown. */
  readonly buildDescription: string;
}

/** Any step Gitloom can run. */
/**
 * `!RunContainerStep`: a container of `image` with `args` as its command (the image's own when
 * null), `envVars`, `workingDir` and `volumeMounts` of workspace paths; all texts interpolated.
 */
export interface RunContainerStep extends StepBase {
  readonly type: 'RunContainerStep';
  readonly image: string;
  readonly args: string | null;
  readonly envVars: readonly { readonly name: string; readonly value: string }[];
  /** Working directory in the container; null = the image's. */
  readonly workingDir: string | null;
  /** `sourcePath` relative to the workspace (null = the workspace itself), `targetPath` in the container. */
  readonly volumeMounts: readonly { readonly sourcePath: string | null; readonly targetPath: string }[];
  readonly useTTY: boolean;
  readonly registryLogins: readonly RegistryLoginSpec[];
}

export type Step = CheckoutStep | CommandStep | RunContainerStep | BuildImageStep | PublishArtifactStep | SetBuildVersionStep | SetBuildDescriptionStep;

/** Param spec types supported (`!TextParam`, `!BooleanParam`, `!ChoiceParam`). */
export type ParamType = 'TextParam' | 'BooleanParam' | 'ChoiceParam';

/** A job parameter declaration (`paramSpecs` item). */
export interface ParamSpec {
  readonly type: ParamType;
  readonly name: string;
  readonly description: string | null;
  /** Only ChoiceParam may allow multiple values; Text and Boolean are always single. */
  readonly allowMultiple: boolean;
  readonly allowEmpty: boolean;
  /** Default values (Boolean: `['true']`/`['false']`); `null` = no default. */
  readonly defaultValue: readonly string[] | null;
  /** Available choices (ChoiceParam only). */
  readonly choices?: readonly string[];
  /** Regular expression a whole text value must match (TextParam only; RE2 syntax, src/query/user-patterns.ts). */
  readonly pattern?: string | null;
  readonly multiline?: boolean;
}

/** Where a supplied param's values come from. */
export type ValuesProvider =
  /** Each inner list is one value set (one matrix entry); a multi-value param has several strings. */
  | { readonly type: 'SpecifiedValues'; readonly values: readonly (readonly string[])[] }
  /** Use the values of the named param of the current build (dependencies, RunJobAction). */
  | { readonly type: 'PassthroughValues'; readonly paramName: string }
  /** Supply no value. */
  | { readonly type: 'Ignore' };

/** A param supplied to another job or by a trigger (`jobParams`/`params` items). */
export interface ParamSupply {
  readonly name: string;
  /** When true the values are names of job secrets. */
  readonly secret: boolean;
  readonly valuesProvider: ValuesProvider;
}

/** A `jobDependencies` item. */
export interface JobDependency {
  readonly jobName: string;
  /** Default true. */
  readonly requireSuccessful: boolean;
  readonly jobParams: readonly ParamSupply[];
  /** Artifacts to copy (pattern set); default `**`; `null` = retrieve nothing. */
  readonly artifacts: string | null;
  /** Relative to the workspace; `null` = workspace root. */
  readonly destinationPath: string | null;
}

interface TriggerBase {
  /** Project path pattern set; `null` = any project. */
  readonly projects: string | null;
  /** Params the triggered build gets (matrix-expanded). */
  readonly params: readonly ParamSupply[];
}

/** `!BranchUpdateTrigger`. */
export interface BranchUpdateTrigger extends TriggerBase {
  readonly type: 'BranchUpdateTrigger';
  readonly branches: string | null;
  readonly paths: string | null;
}

/** `!TagCreateTrigger`: `branches` = the tagged commit must be on one of them. */
export interface TagCreateTrigger extends TriggerBase {
  readonly type: 'TagCreateTrigger';
  readonly tags: string | null;
  readonly branches: string | null;
}

/** `!PullRequestUpdateTrigger` (legacy name `!PullRequestTrigger`), `!PullRequestMergeTrigger`, `!PullRequestDiscardTrigger`. */
export interface PullRequestTrigger extends TriggerBase {
  readonly type: 'PullRequestUpdateTrigger' | 'PullRequestMergeTrigger' | 'PullRequestDiscardTrigger';
  /** Target branch pattern set. */
  readonly branches: string | null;
  readonly paths: string | null;
}

/** `!DependencyFinishedTrigger`. */
export interface DependencyFinishedTrigger extends TriggerBase {
  readonly type: 'DependencyFinishedTrigger';
}

/** `!ScheduleTrigger` (Quartz cron with seconds; evaluated by the scheduler). */
export interface ScheduleTrigger extends TriggerBase {
  readonly type: 'ScheduleTrigger';
  readonly cronExpression: string;
}

/** Any supported job trigger. */
export type JobTrigger = BranchUpdateTrigger | TagCreateTrigger | PullRequestTrigger | DependencyFinishedTrigger | ScheduleTrigger;

/** `!RunJobAction`: submit another job when `condition` holds after this build finishes. */
export interface RunJobAction {
  readonly type: 'RunJobAction';
  /** Condition source text, e.g. `successful and on branch "main"`. */
  readonly condition: string;
  /** Parsed condition. */
  readonly conditionAst: Condition;
  readonly jobName: string;
  readonly jobParams: readonly ParamSupply[];
}

/** Any supported post-build action. */
export type PostBuildAction = RunJobAction;

/** One job of the spec. */
export interface Job {
  readonly name: string;
  /** Executor name; `null` = first applicable. */
  readonly jobExecutor: string | null;
  readonly steps: readonly Step[];
  readonly paramSpecs: readonly ParamSpec[];
  readonly jobDependencies: readonly JobDependency[];
  readonly triggers: readonly JobTrigger[];
  /** What the job's builds keep from one to the next (docs/compatibility.md#builds-caches). */
  readonly caches: readonly JobCache[];
  /** The services of `requiredServices`, in order (docs/compatibility.md#builds-services). */
  readonly services: readonly JobService[];
  /** Seconds; default 3600. */
  readonly timeout: number;
  readonly postBuildActions: readonly PostBuildAction[];
  /** Retry condition source; default `never`. */
  readonly retryCondition: string;
  /** Parsed retry condition. */
  readonly retryConditionAst: Condition;
  /** Default 3. */
  readonly maxRetries: number;
  /** Seconds; default 30. The k-th retry waits `retryDelay × 2^k` (docs/compatibility.md#builds-lifecycle). */
  readonly retryDelay: number;
  /**
   * Names of job secrets this job references (`@secret:x@`, secret param supplies, clone
   * credentials), sorted and unique — the caller checks they exist before running.
   */
  readonly secretRefs: readonly string[];
}

/** A `caches` item of a job: both texts still to interpolate. */
export interface JobCache {
  /** Names the cache within the project. */
  readonly key: string;
  /** Relative to the workspace, or absolute: a path in the job's containers. */
  readonly path: string;
}

/** A top-level `services` item: a container the job's steps reach by `name`; texts still to interpolate. */
export interface JobService {
  readonly name: string;
  readonly image: string;
  /** Arguments of the image's entry point (quoted as in a shell), or null for the image's own. */
  readonly arguments: string | null;
  readonly envVars: readonly { readonly name: string; readonly value: string }[];
  /** Run by `sh -c` in the service's container until it exits 0. */
  readonly readinessCheckCommand: string;
}

/** A parsed and validated build spec. */
export interface BuildSpec {
  readonly version: number;
  readonly jobs: readonly Job[];
  /** Top-level `properties` (used as `@property:name@`). */
  readonly properties: readonly { readonly name: string; readonly value: string }[];
}
