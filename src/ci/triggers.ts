/**
 * Automatic job triggers (docs/compatibility.md#builds-triggers): given a project event,
 * which jobs of a build spec run, with which params, on which ref and with which reason.
 * Each job's triggers are checked in order; the first match wins.
 */
import type { FinalStatus } from './conditions.js';
import { matchesPatterns } from './patterns.js';
import type { BuildSpec, Job, JobTrigger, ParamSupply } from './spec-types.js';

/** Param values by param name (multi-valued params have several strings). */
export type ParamMap = Record<string, string[]>;

/** Events that can trigger jobs. `projectPath` feeds the triggers' `projects` filter. */
export type TriggerEvent =
  | {
      readonly kind: 'branch-update';
      readonly projectPath?: string;
      /** Branch name without `refs/heads/`. Deleted branches never trigger: do not send them. */
      readonly branch: string;
      /** Files changed old..new; `null` for a new branch (then `paths` filters always match). */
      readonly changedFiles: readonly string[] | null;
      /** Full message of the new head commit (checked for `[skip ci]` and friends). */
      readonly commitMessage: string;
    }
  | {
      readonly kind: 'tag-create';
      readonly projectPath?: string;
      /** Tag name without `refs/tags/`. */
      readonly tag: string;
      /**
       * Branches containing the tagged commit; needed only when a trigger has `branches`
       * (a trigger with `branches` never matches when this is absent).
       */
      readonly commitBranches?: readonly string[];
    }
  | {
      readonly kind: 'pull-request';
      readonly projectPath?: string;
      /** `update` (open or new merge preview, default), `merge` or `discard`. */
      readonly action?: 'update' | 'merge' | 'discard';
      /** PR number, for the ref `refs/pulls/<n>/merge`. */
      readonly number?: number;
      readonly targetBranch: string;
      readonly sourceBranch: string;
      /** Files changed between the PR base and its head. */
      readonly changedFiles: readonly string[];
      /** Message of the PR head commit; `[skip ci]` skips update triggers of non-required jobs. */
      readonly commitMessage?: string;
      /** Jobs required by branch protection of the target branch (never skipped). */
      readonly requiredJobs?: readonly string[];
    }
  | {
      readonly kind: 'schedule';
      readonly projectPath?: string;
      /** The default branch (scheduled jobs run on its head). */
      readonly branch: string;
    }
  | {
      readonly kind: 'dependency-finished';
      readonly projectPath?: string;
      /** Job name of the finished build. */
      readonly jobName: string;
      readonly status: FinalStatus;
      /** Non-secret params of the finished build. */
      readonly params: Readonly<Record<string, readonly string[]>>;
      /** Ref of the finished build (reused by the triggered build). */
      readonly refName: string;
    };

/** One job to submit because of an event. */
export interface TriggerMatch {
  readonly job: Job;
  readonly trigger: JobTrigger;
  /** Submit reason, e.g. `Branch 'main' is updated`. */
  readonly reason: string;
  /** Ref of the build, e.g. `refs/heads/main`; null for a PR event without `number`. */
  readonly refName: string | null;
  /** One param map per build to submit (matrix-expanded, defaults filled in). */
  readonly paramSets: ParamMap[];
}

const SKIP_MARKERS = ['[skip ci]', '[ci skip]', '[no ci]', '[skip job]', '[job skip]', '[no job]'];

/**
 * Whether a commit message asks to skip CI: contains `[skip ci]`, `[ci skip]`, `[no ci]`,
 * `[skip job]`, `[job skip]` or `[no job]`, case-insensitively (docs/compatibility.md#builds-triggers).
 */
export function isSkipCommitMessage(message: string): boolean {
  const lower = message.toLowerCase();
  return SKIP_MARKERS.some((m) => lower.includes(m));
}

/**
 * Returns every job of the spec that the event triggers, in spec order.
 *
 * @throws PatternSyntaxError never for a spec from `parseBuildSpec` (patterns are validated there).
 */
export function matchTriggers(spec: BuildSpec, event: TriggerEvent): TriggerMatch[] {
  return spec.jobs.flatMap((job) => {
    const m = matchesTrigger(job, event);
    return m ? [m] : [];
  });
}

/**
 * Checks one job's triggers against an event; the first matching trigger wins.
 *
 * Rules per trigger (docs/compatibility.md#builds-triggers table): `projects` filters by `event.projectPath`
 * (a trigger with `projects` never matches an event without it); branch/tag/path filters are
 * OneDev pattern sets; `paths` matches when any changed file matches.
 *
 * @returns the match, or null when no trigger of the job fires.
 */
export function matchesTrigger(job: Job, event: TriggerEvent): TriggerMatch | null {
  for (const trigger of job.triggers) {
    if (trigger.projects != null && (event.projectPath === undefined || !matchesPatterns(trigger.projects, event.projectPath))) continue;
    const hit = triggerHit(job, trigger, event);
    if (hit) return { job, trigger, ...hit, paramSets: expandParams(job, trigger.params) };
  }
  return null;
}

function anyFileMatches(paths: string | null, files: readonly string[] | null): boolean {
  if (paths == null || files === null) return true;
  return files.some((f) => matchesPatterns(paths, f));
}

function triggerHit(job: Job, trigger: JobTrigger, event: TriggerEvent): { reason: string; refName: string | null } | null {
  switch (event.kind) {
    case 'branch-update':
      if (trigger.type !== 'BranchUpdateTrigger') return null;
      if (isSkipCommitMessage(event.commitMessage)) return null;
      if (!matchesPatterns(trigger.branches, event.branch)) return null;
      if (!anyFileMatches(trigger.paths, event.changedFiles)) return null;
      return { reason: `Branch '${event.branch}' is updated`, refName: `refs/heads/${event.branch}` };
    case 'tag-create':
      if (trigger.type !== 'TagCreateTrigger') return null;
      if (!matchesPatterns(trigger.tags, event.tag)) return null;
      if (trigger.branches != null && !(event.commitBranches ?? []).some((b) => matchesPatterns(trigger.branches, b))) return null;
      return { reason: `Tag '${event.tag}' is created`, refName: `refs/tags/${event.tag}` };
    case 'pull-request': {
      const action = event.action ?? 'update';
      const wanted = action === 'update' ? 'PullRequestUpdateTrigger' : action === 'merge' ? 'PullRequestMergeTrigger' : 'PullRequestDiscardTrigger';
      if (trigger.type !== wanted) return null;
      if (
        action === 'update' &&
        event.commitMessage !== undefined &&
        isSkipCommitMessage(event.commitMessage) &&
        !(event.requiredJobs ?? []).includes(job.name)
      ) {
        return null;
      }
      if (!matchesPatterns(trigger.branches, event.targetBranch)) return null;
      if (!anyFileMatches(trigger.paths, event.changedFiles)) return null;
      const reason = action === 'update' ? 'Pull request is opened/updated' : action === 'merge' ? 'Pull request is merged' : 'Pull request is discarded';
      return { reason, refName: event.number === undefined ? null : `refs/pulls/${event.number}/merge` };
    }
    case 'schedule':
      if (trigger.type !== 'ScheduleTrigger') return null;
      return { reason: 'Scheduled', refName: `refs/heads/${event.branch}` };
    case 'dependency-finished': {
      if (trigger.type !== 'DependencyFinishedTrigger') return null;
      const dep = job.jobDependencies.find((d) => d.jobName === event.jobName);
      if (!dep) return null;
      if (dep.requireSuccessful && event.status !== 'SUCCESSFUL') return null;
      for (const supply of dep.jobParams) {
        if (supply.secret || supply.valuesProvider.type !== 'SpecifiedValues') continue;
        const actual = event.params[supply.name] ?? [];
        if (!supply.valuesProvider.values.some((set) => sameValues(set, actual))) return null;
      }
      return { reason: `Dependency job '${event.jobName}' is finished`, refName: event.refName };
    }
  }
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * The job's params with their declared defaults (`defaultValue`, or `[]` when none).
 */
export function defaultParams(job: Job): ParamMap {
  const result: ParamMap = {};
  for (const spec of job.paramSpecs) result[spec.name] = [...(spec.defaultValue ?? [])];
  return result;
}

/**
 * Expands param supplies into param maps: the cartesian product of every supplied param's
 * value sets (the "param matrix"), each completed with the job's defaults for params not
 * supplied. `!PassthroughValues` takes the values from `source` (the current build's params);
 * `!Ignore` leaves the param to its default.
 *
 * @example two values for A and two for B give four maps.
 */
export function expandParams(job: Job, supplies: readonly ParamSupply[], source: Readonly<Record<string, readonly string[]>> = {}): ParamMap[] {
  let sets: ParamMap[] = [defaultParams(job)];
  for (const supply of supplies) {
    const provider = supply.valuesProvider;
    let choices: string[][];
    if (provider.type === 'SpecifiedValues') choices = provider.values.map((v) => [...v]);
    else if (provider.type === 'PassthroughValues') choices = [[...(source[provider.paramName] ?? [])]];
    else continue;
    if (choices.length === 0) choices = [[]];
    sets = sets.flatMap((set) => choices.map((values) => ({ ...set, [supply.name]: values })));
  }
  return sets;
}
