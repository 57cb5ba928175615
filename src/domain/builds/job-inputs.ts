/**
 * What a PENDING build needs before it runs, wherever it runs — in a server process's scheduler
 * (src/domain/builds/scheduler.ts) or on an agent (src/domain/builds/agent-leases.ts): its job at
 * its commit, the executor chosen for it and the slots its job takes ({@link JobPlanner}), and
 * the parameters and secrets it runs with ({@link jobInputs}); or the log lines of why it cannot
 * run.
 */
import type { BuildSpec, Job } from '../../ci/build-spec.js';
import type { ExecutorKind } from '../../ci/executor.js';
import { DatabaseUnavailable } from '../../db/availability.js';
import type { BuildRow, ProjectRow } from '../../db/schema.js';
import type { Context } from '../context.js';
import { getProjectRow, secretKey } from '../projects/index.js';
import { chooseJobExecutor, type ExecutorPlacement } from './executor-selection.js';
import { buildJobSecrets } from './secrets.js';
import { findJob, specAt } from './spec.js';
import { appendLog } from './storage.js';

/** A PENDING build's executor and the slots of it its job takes, or the log lines of why it cannot run. */
export type Plan = { readonly executor: ExecutorPlacement; readonly slots: number } | { readonly failure: string[] };

/** Milliseconds the executor chosen for a waiting build is kept before it is chosen again (settings may change). */
const PLAN_MS = 3000;

/**
 * The plans of PENDING builds, each kept for {@link PLAN_MS} while the build waits for room:
 * choosing reads the spec at the build's commit and the executors setting.
 */
export class JobPlanner {
  private readonly plans = new Map<number, { plan: Plan; until: number }>();

  /**
   * @param discover the executor type auto-discovered when no executor is configured.
   * @param onError reports a fault choosing (the build then fails with it).
   */
  constructor(
    private readonly ctx: Context,
    private readonly discover: () => ExecutorKind,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Forgets the plans of builds no longer among `pending` (the cache stays as small as the builds waiting). */
  retain(pending: readonly { id: number }[]): void {
    const ids = new Set(pending.map((b) => b.id));
    for (const id of this.plans.keys()) if (!ids.has(id)) this.plans.delete(id);
  }

  /** Forgets the plan of a build that was claimed. */
  forget(buildId: number): void {
    this.plans.delete(buildId);
  }

  /**
   * The executor of a PENDING build and the slots its job takes, or the log lines of why it
   * cannot run (no spec, no such job, no executor, a fault reading them).
   *
   * @throws DatabaseUnavailable during an outage (the build is planned again once it is over).
   */
  async planOf(build: BuildRow): Promise<Plan> {
    const known = this.plans.get(build.id);
    if (known && known.until > Date.now()) return known.plan;
    let plan: Plan;
    try {
      plan = await this.choose(build);
    } catch (error) {
      // an outage ends the tick (the build is chosen again once the database is back); any other
      // fault fails the build, as a fault running it would, rather than holding up the builds after it
      if (error instanceof DatabaseUnavailable) throw error;
      this.onError(error);
      plan = { failure: [`Build failed: ${error instanceof Error ? error.message : String(error)}`] };
    }
    this.plans.set(build.id, { plan, until: Date.now() + PLAN_MS });
    return plan;
  }

  private async choose(build: BuildRow): Promise<Plan> {
    const found = await jobOf(this.ctx, build);
    if ('failure' in found) return found;
    const choice = await chooseJobExecutor(this.ctx, build, found.spec, found.job, this.discover);
    if ('failure' in choice) return { failure: [choice.failure, 'Job failed'] };
    // as OneDev: a docker job takes one more slot per service
    const slots = choice.executor.kind === 'ServerDockerExecutor' ? 1 + found.job.services.length : 1;
    return { executor: choice.executor, slots };
  }
}

/** The spec and job of a build at its commit, or the log lines of why there are none. */
export async function jobOf(ctx: Context, build: BuildRow): Promise<{ spec: BuildSpec; job: Job } | { failure: string[] }> {
  const spec = await specAt(ctx.repoPath(build.projectId), build.commitHash);
  if (spec.kind !== 'valid') {
    const message = spec.kind === 'absent' ? `Build spec not defined (project: ${build.projectId}, commit: ${build.commitHash})` : spec.message;
    return { failure: [...message.split('\n'), 'Job failed'] };
  }
  const job = findJob(spec.spec, build.jobName);
  if (!job) return { failure: [`Job not found (project: ${build.projectId}, commit: ${build.commitHash}, job: ${build.jobName})`, 'Job failed'] };
  return { spec: spec.spec, job };
}

/** What a build's job runs with (see {@link jobInputs}). */
export interface JobInputs {
  spec: BuildSpec;
  job: Job;
  project: ProjectRow;
  params: Record<string, string[]>;
  secrets: Record<string, string>;
  /** The values of the secret parameters, masked in the log. */
  secretValues: string[];
}

/**
 * What a build's job needs before it runs: the spec and job at the build's commit, the
 * project, the parameters and the secrets (withheld ones are logged); or the log lines of why
 * the build fails (no spec, an invalid spec, no such job, a secret not found).
 */
export async function jobInputs(ctx: Context, build: BuildRow): Promise<JobInputs | { failure: string[] }> {
  const found = await jobOf(ctx, build);
  if ('failure' in found) return found;
  const { job } = found;
  const project = await getProjectRow(ctx.db, build.projectId);
  const paramRows = await ctx.db.selectFrom('buildParams').selectAll().where('buildId', '=', build.id).orderBy('id').execute();
  const { secrets, withheld } = await buildJobSecrets(ctx, build, job.secretRefs, secretKey(ctx.config));
  if (withheld.length > 0) await appendLog(ctx.config, build, ...withheld);
  const { params, secretValues } = paramValues(paramRows, secrets);
  const missing = job.secretRefs.filter((name) => secrets[name] === undefined);
  if (missing.length > 0) return { failure: [`Job secret not found: ${missing.join(', ')}`, 'Job failed'] };
  return { spec: found.spec, job, project, params, secrets, secretValues };
}

/**
 * The parameter values a retry condition reads (`"Param" is "v"`): secret parameters without
 * their values.
 */
export async function conditionParams(ctx: Context, buildId: number): Promise<Record<string, string[]>> {
  const rows = await ctx.db.selectFrom('buildParams').select(['name', 'type', 'value']).where('buildId', '=', buildId).orderBy('id').execute();
  return paramValues(rows, {}).params;
}

/** How many PENDING builds, oldest first, a scheduler or an agent's lease looks at for one it can run. */
const PENDING_LOOKAHEAD = 200;

/** The PENDING builds, oldest first, at most {@link PENDING_LOOKAHEAD}. */
export function pendingBuilds(ctx: Context): Promise<BuildRow[]> {
  return ctx.db.selectFrom('builds').selectAll().where('status', '=', 'PENDING').orderBy('id').limit(PENDING_LOOKAHEAD).execute();
}

/**
 * A build's parameter values by name, in order: a secret parameter's value is a literal
 * (`$OneDev-Secret-Literal$…`) or the name of a job secret, left out when that secret is not
 * available; a null value gives the name with no value.
 */
function paramValues(rows: readonly { name: string; type: string; value: string | null }[], secrets: Record<string, string>) {
  const params: Record<string, string[]> = {};
  const secretValues: string[] = [];
  for (const row of rows) {
    params[row.name] ??= [];
    if (row.value === null) continue;
    if (row.type === 'Secret') {
      const literal = row.value.startsWith('$OneDev-Secret-Literal$') ? row.value.slice('$OneDev-Secret-Literal$'.length) : secrets[row.value];
      if (literal !== undefined) {
        params[row.name].push(literal);
        secretValues.push(literal);
      }
    } else params[row.name].push(row.value);
  }
  return { params, secretValues };
}
