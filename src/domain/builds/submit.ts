/**
 * Creating builds (docs/compatibility.md#builds-creating-builds): the one path every creation takes —
 * REST job runs, automatic triggers, dependencies, post-build actions — plus rebuild and cancel.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { BuildSpec, Job, ParamSpec } from '../../ci/build-spec.js';
import { expandParams, type ParamMap, type TriggerMatch } from '../../ci/triggers.js';
import type { Transaction } from 'kysely';
import type { BuildRow, BuildStatus, Database } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { compileUserRegex, UserPatternError } from '../../query/index.js';
import { isAncestor } from '../../git/merge.js';
import { isObjectId } from '../../git/names.js';
import { refHead, resolveCommit } from '../../git/refs.js';
import type { Db } from '../../db/database.js';
import { SYSTEM_ID, type Context } from '../context.js';
import { forkRootId, takeNextNumber } from '../projects/index.js';
import { setBuildCommit } from '../pulls/index.js';
import { appendLog, resetBuildStorage } from './storage.js';
import { findJob, specAt } from './spec.js';
import { announceBuildsChanged, notifySchedulers } from './wakeup.js';
import { finishBuild } from './finish.js';

/** Unfinished statuses (docs/compatibility.md#builds-lifecycle). */
export const UNFINISHED: readonly BuildStatus[] = ['WAITING', 'PENDING', 'RUNNING'];
/** Final statuses. */
export const FINISHED: readonly BuildStatus[] = ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** Display type of a param spec on the wire (docs/compatibility.md#builds-json BuildParam). */
const PARAM_TYPES: Record<ParamSpec['type'], string> = { TextParam: 'Text', BooleanParam: 'Checkbox', ChoiceParam: 'Enumeration' };

/** What to build. */
export interface SubmitRequest {
  projectId: number;
  commitHash: string;
  refName: string;
  jobName: string;
  params: ParamMap;
  /** Names of params whose values are job secret names. */
  secretParams?: ReadonlySet<string>;
  reason: string;
  pipeline: string;
  submitterId: number;
  requestId: number | null;
  /** Check every declared param is supplied and none is unknown (REST runs; docs/compatibility.md#builds-creating-builds step 2). */
  strictParams?: boolean;
  /**
   * For submissions no one waits on (triggers, post-build actions, schedules): when the spec
   * refuses the submission (a param value that fails its pattern or its type, a dependency that
   * cannot be submitted), {@link submitBuild} creates a build that FAILED at once with the reason
   * in its log instead of throwing, so the pusher sees why the job did not run — as an invalid
   * spec does (docs/compatibility.md#builds-creating-builds step 1). OneDev only logs the error on the server.
   */
  failWhenRefused?: boolean;
}

/** One stored build param (`buildParams` row without its build). */
export interface ParamRow {
  name: string;
  type: string;
  value: string | null;
}

/**
 * Validates params against the job's param specs and returns the rows to store: one per value,
 * one `null` row for an empty list.
 *
 * @throws BadRequest `Missing job parameter (X)`, `Unknown job parameter (X)` (strict only), or a value error
 *   such as `Value of job parameter (X) does not match pattern P` (the whole value must match).
 */
export async function paramRows(job: Job, params: ParamMap, secretParams: ReadonlySet<string>, strict: boolean): Promise<ParamRow[]> {
  const rows: ParamRow[] = [];
  let turn = performance.now();
  for (const name of Object.keys(params)) {
    if (!job.paramSpecs.some((s) => s.name === name)) {
      if (strict) throw new BadRequest(`Unknown job parameter (${name})`);
    }
  }
  for (const spec of job.paramSpecs) {
    const values = params[spec.name];
    if (values === undefined) {
      if (strict) throw new BadRequest(`Missing job parameter (${spec.name})`);
      continue;
    }
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) throw new BadRequest(`Invalid values of job parameter (${spec.name})`);
    if (values.length > 1 && !spec.allowMultiple) throw new BadRequest(`Job parameter (${spec.name}) does not allow multiple values`);
    if (values.length === 0 && !spec.allowEmpty) throw new BadRequest(`Job parameter (${spec.name}) can not be empty`);
    for (const v of values) {
      if (spec.type === 'BooleanParam' && v !== 'true' && v !== 'false') throw new BadRequest(`Invalid boolean value of job parameter (${spec.name}): ${v}`);
      if (spec.type === 'ChoiceParam' && spec.choices && spec.choices.length > 0 && !spec.choices.includes(v)) {
        throw new BadRequest(`Invalid choice of job parameter (${spec.name}): ${v}`);
      }
      if (spec.type === 'TextParam' && spec.pattern) {
        if (!textMatches(spec.name, spec.pattern, v)) throw new BadRequest(`Value of job parameter (${spec.name}) does not match pattern ${spec.pattern}`);
        // each match is bounded; a job with many patterned params lets other requests run between them
        if (performance.now() - turn > 10) {
          await nextTurn();
          turn = performance.now();
        }
      }
    }
    const type = secretParams.has(spec.name) ? 'Secret' : PARAM_TYPES[spec.type];
    if (values.length === 0) rows.push({ name: spec.name, type, value: null });
    for (const v of values) rows.push({ name: spec.name, type, value: v });
  }
  return rows;
}

/**
 * The rows of the params a refused submission was given (see {@link SubmitRequest.failWhenRefused}):
 * the values supplied for declared params, as supplied, so the failed build shows them and a
 * repeated submission finds it.
 */
function suppliedParamRows(job: Job, params: ParamMap, secretParams: ReadonlySet<string>): ParamRow[] {
  const rows: ParamRow[] = [];
  for (const spec of job.paramSpecs) {
    const values = params[spec.name];
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) continue;
    const type = secretParams.has(spec.name) ? 'Secret' : PARAM_TYPES[spec.type];
    if (values.length === 0) rows.push({ name: spec.name, type, value: null });
    for (const v of values) rows.push({ name: spec.name, type, value: v });
  }
  return rows;
}

/**
 * Whether a TextParam value matches the whole pattern (OneDev's `@Pattern` validation, Java's
 * `matches()`), in linear time (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 *
 * @throws BadRequest `Value of job parameter (X) is too long to check against pattern P: …`;
 *   `Job parameter (X) has an unusable pattern: …` (a spec read before patterns were checked).
 */
function textMatches(name: string, pattern: string, value: string): boolean {
  try {
    return compileUserRegex(pattern).matches(value);
  } catch (error) {
    if (!(error instanceof UserPatternError)) throw error;
    if (error.problem === 'text-too-long')
      throw new BadRequest(`Value of job parameter (${name}) is too long to check against pattern ${pattern}: ${error.message}`);
    throw new BadRequest(`Job parameter (${name}) has an unusable pattern: ${error.message}`);
  }
}

/** Canonical text of non-secret params, for de-duplication and auto-cancel comparisons. */
function paramKey(rows: readonly { name: string; type: string; value: string | null }[]): string {
  return JSON.stringify(
    rows
      .filter((r) => r.type !== 'Secret')
      .map((r) => [r.name, r.value])
      .sort(),
  );
}

async function paramKeys(ctx: Context, buildIds: readonly number[]): Promise<Map<number, string>> {
  const rows =
    buildIds.length === 0
      ? []
      : await ctx.db.selectFrom('buildParams').select(['buildId', 'name', 'type', 'value']).where('buildId', 'in', buildIds).orderBy('id').execute();
  const byBuild = new Map<number, ParamRow[]>(buildIds.map((id) => [id, []]));
  for (const r of rows) byBuild.get(r.buildId)!.push(r);
  return new Map([...byBuild].map(([id, list]) => [id, paramKey(list)]));
}

/**
 * The submission of one param set of a trigger match: by the system, for the match's job and
 * reason, the params the trigger declares secret taken as secret names, and a submission the
 * spec refuses giving a FAILED build (`failWhenRefused`; docs/compatibility.md#builds-triggers).
 */
export function triggeredRequest(
  match: TriggerMatch,
  params: ParamMap,
  at: { projectId: number; commitHash: string; refName: string; requestId: number | null; pipeline: string },
): SubmitRequest {
  return {
    projectId: at.projectId,
    commitHash: at.commitHash,
    refName: at.refName,
    jobName: match.job.name,
    params,
    secretParams: new Set(match.trigger.params.filter((p) => p.secret).map((p) => p.name)),
    reason: match.reason,
    pipeline: at.pipeline,
    submitterId: SYSTEM_ID,
    requestId: at.requestId,
    failWhenRefused: true,
  };
}

/**
 * Submits a job (docs/compatibility.md#builds-creating-builds steps 1–6): reads the spec at the commit, validates the
 * params, de-duplicates inside the pipeline, submits dependencies recursively, creates the build
 * (WAITING) with a fresh storage dir, auto-cancels superseded builds and, for a pull-request
 * build, records the request's build commit. An invalid spec still creates the build, FAILED with
 * the validation message in its log.
 *
 * With `failWhenRefused`, a submission the spec refuses gives a FAILED build instead of an
 * error (see {@link SubmitRequest.failWhenRefused}).
 *
 * @returns the build id.
 * @throws BadRequest `Build spec not defined (project: p, commit: c)`, `Job not found (…)`, param errors.
 */
export async function submitBuild(ctx: Context, req: SubmitRequest): Promise<number> {
  const repo = ctx.repoPath(req.projectId);
  const spec = await specAt(repo, req.commitHash);
  if (spec.kind === 'absent') throw new BadRequest(`Build spec not defined (project: ${req.projectId}, commit: ${req.commitHash})`);
  if (spec.kind === 'invalid') return createFailedBuild(ctx, req, spec.message);
  let id: number;
  try {
    id = await submitWithSpec(ctx, spec.spec, req, 0);
  } catch (error) {
    if (!req.failWhenRefused || !(error instanceof BadRequest)) throw error;
    return refusedBuild(ctx, spec.spec, req, error.message);
  }
  notifySchedulers();
  return id;
}

/**
 * The FAILED build of a submission the spec refused: `Job 'X' could not be submitted: <reason>`
 * in its log, the supplied params stored. A build of the same job, ref, request, pipeline and
 * params on the commit is returned instead when there is one, so submitting again (a journal
 * entry reacted to again) adds nothing.
 */
async function refusedBuild(ctx: Context, spec: BuildSpec, req: SubmitRequest, reason: string): Promise<number> {
  const job = findJob(spec, req.jobName);
  const rows = job ? suppliedParamRows(job, req.params, req.secretParams ?? new Set()) : [];
  const same = await samePipelineBuild(ctx, req, paramKey(rows));
  if (same !== null) return same;
  return createFailedBuild(ctx, req, `Job '${req.jobName}' could not be submitted: ${reason}`, rows);
}

/**
 * The builds of one job on one ref of a project: the stream in which a build's predecessors
 * (its previous status, the older builds it cancels) and duplicates are looked up
 * (docs/compatibility.md#builds-lifecycle, docs/compatibility.md#builds-creating-builds). A query
 * to select from and narrow further.
 */
export function jobRefBuilds(db: Db, of: { projectId: number; jobName: string; refName: string }) {
  return db.selectFrom('builds').where('projectId', '=', of.projectId).where('jobName', '=', of.jobName).where('refName', '=', of.refName);
}

/**
 * De-duplication inside the pipeline (docs/compatibility.md#builds-creating-builds step 3): the
 * build of the submission's job, ref, request and pipeline on its commit whose params have `key`,
 * or null.
 */
async function samePipelineBuild(ctx: Context, req: SubmitRequest, key: string): Promise<number | null> {
  const same = await jobRefBuilds(ctx.db, req)
    .select('id')
    .where('commitHash', '=', req.commitHash)
    .where('pipeline', '=', req.pipeline)
    .where((eb) => (req.requestId === null ? eb('requestId', 'is', null) : eb('requestId', '=', req.requestId)))
    .execute();
  const keys = await paramKeys(
    ctx,
    same.map((b) => b.id),
  );
  return same.find((b) => keys.get(b.id) === key)?.id ?? null;
}

async function submitWithSpec(ctx: Context, spec: BuildSpec, req: SubmitRequest, depth: number): Promise<number> {
  const job = findJob(spec, req.jobName);
  if (!job) throw new BadRequest(`Job not found (project: ${req.projectId}, commit: ${req.commitHash}, job: ${req.jobName})`);
  if (depth > 50) throw new BadRequest('Job dependencies are nested too deeply');
  const secretParams = req.secretParams ?? new Set<string>();
  const rows = await paramRows(job, req.params, secretParams, req.strictParams === true);
  const key = paramKey(rows);

  const same = await samePipelineBuild(ctx, req, key);
  if (same !== null) return same;

  const dependences: { dependencyId: number; requireSuccessful: number; artifacts: string | null; destinationPath: string | null }[] = [];
  const sourceParams = Object.fromEntries(Object.entries(req.params));
  for (const dep of job.jobDependencies) {
    const depJob = findJob(spec, dep.jobName);
    if (!depJob) throw new BadRequest(`Job not found (project: ${req.projectId}, commit: ${req.commitHash}, job: ${dep.jobName})`);
    const secretNames = new Set(dep.jobParams.filter((p) => p.secret).map((p) => p.name));
    for (const params of expandParams(depJob, dep.jobParams, sourceParams)) {
      const dependencyId = await submitWithSpec(ctx, spec, { ...req, jobName: dep.jobName, params, secretParams: secretNames, strictParams: false }, depth + 1);
      dependences.push({ dependencyId, requireSuccessful: dep.requireSuccessful ? 1 : 0, artifacts: dep.artifacts, destinationPath: dep.destinationPath });
    }
  }

  const scopeId = await forkRootId(ctx.db, req.projectId);
  const now = ctx.now();
  const build = await ctx.db.transaction().execute(async (tx) => {
    const row = await insertBuild(ctx, tx, scopeId, req, job.name, 'WAITING', now);
    if (rows.length > 0)
      await tx
        .insertInto('buildParams')
        .values(rows.map((r) => ({ buildId: row.id, ...r })))
        .execute();
    if (dependences.length > 0)
      await tx
        .insertInto('buildDependences')
        .values(dependences.map((d) => ({ dependentId: row.id, ...d })))
        .execute();
    if (req.requestId !== null) await setBuildCommit(tx, req.requestId, req.commitHash);
    // Before the build becomes visible: a scheduler that claims it at once must not find its
    // fresh log removed under it.
    await resetBuildStorage(ctx.config, row);
    return row;
  });
  await autoCancel(ctx, build, key);
  return build.id;
}

/**
 * Inserts a build of `jobName` numbered in the fork root's build sequence (`scopeId`), submitted
 * `now`: WAITING to be run, or FAILED at once (finished `now`).
 */
async function insertBuild(
  ctx: Context,
  tx: Transaction<Database>,
  scopeId: number,
  req: SubmitRequest,
  jobName: string,
  status: 'WAITING' | 'FAILED',
  now: number,
): Promise<BuildRow> {
  const number = await takeNextNumber(tx, scopeId, 'build');
  const build = await tx
    .insertInto('builds')
    .values({
      numberScopeId: scopeId,
      projectId: req.projectId,
      agentId: null,
      submitterId: req.submitterId,
      cancellerId: null,
      jobName,
      jobWorkspace: null,
      refName: req.refName,
      version: null,
      description: null,
      uuid: randomUUID(),
      number,
      commitHash: req.commitHash,
      status,
      paused: 0,
      submitDate: now,
      pendingDate: null,
      runningDate: null,
      finishDate: status === 'FAILED' ? now : null,
      retryDate: null,
      pipeline: req.pipeline,
      submitReason: req.reason.slice(0, 1000),
      requestId: req.requestId,
      issueId: null,
      retryCount: 0,
      leaseOwner: null,
      leaseExpires: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await ctx.events.dispatchInTransaction('activity', { db: tx, activity: { type: 'BUILD', buildId: build.id, actorId: req.submitterId, date: now } });
  if (status === 'WAITING') await announceBuildsChanged(tx);
  return build;
}

/**
 * Creates a build that failed before it could run (invalid build spec, docs/compatibility.md#builds-creating-builds
 * step 1; a refused submission): FAILED at once, with `message` and `Job failed` in its log, and
 * `params` as its params (none for an invalid spec: the spec that declares them is unreadable).
 *
 * @returns the build id.
 */
export async function createFailedBuild(ctx: Context, req: SubmitRequest, message: string, params: readonly ParamRow[] = []): Promise<number> {
  const scopeId = await forkRootId(ctx.db, req.projectId);
  const now = ctx.now();
  const build = await ctx.db.transaction().execute(async (tx) => {
    const row = await insertBuild(ctx, tx, scopeId, req, req.jobName, 'FAILED', now);
    if (params.length > 0)
      await tx
        .insertInto('buildParams')
        .values(params.map((r) => ({ buildId: row.id, ...r })))
        .execute();
    // The log is written before the FAILED build becomes visible.
    await resetBuildStorage(ctx.config, row);
    await appendLog(ctx.config, row, ...message.split('\n'), 'Job failed');
    return row;
  });
  return build.id;
}

/**
 * Auto-cancel on submit (docs/compatibility.md#builds-lifecycle): older unfinished builds of the same project,
 * job, ref, request and non-secret params are cancelled when the new build is a pull-request
 * build or the old commit is an ancestor of (or equal to) the new one.
 */
async function autoCancel(ctx: Context, build: BuildRow, key: string): Promise<void> {
  const older = await jobRefBuilds(ctx.db, build)
    .select(['id', 'commitHash'])
    .where((eb) => (build.requestId === null ? eb('requestId', 'is', null) : eb('requestId', '=', build.requestId)))
    .where('issueId', 'is', null)
    .where('status', 'in', UNFINISHED)
    .where('id', '<', build.id)
    .where('pipeline', '<>', build.pipeline)
    .execute();
  if (older.length === 0) return;
  const keys = await paramKeys(
    ctx,
    older.map((b) => b.id),
  );
  const repo = ctx.repoPath(build.projectId);
  for (const old of older) {
    if (keys.get(old.id) !== key) continue;
    if (build.requestId !== null || (await isAncestor(repo, old.commitHash, build.commitHash, { missing: false }))) {
      await cancelBuildRow(ctx, old.id, null);
    }
  }
}

/**
 * Cancels an unfinished build: CANCELLED with finishDate and canceller (null = by the system).
 * A running execution notices the change and stops its processes.
 *
 * @returns whether the build was unfinished (and is now cancelled).
 */
export async function cancelBuildRow(ctx: Context, buildId: number, cancellerId: number | null): Promise<boolean> {
  const cancelled = await finishBuild(ctx, buildId, { status: 'CANCELLED', cancellerId }, (eb) => eb('status', 'in', UNFINISHED));
  if (cancelled) await appendLog(ctx.config, cancelled, cancellerId === null ? 'Build cancelled (superseded)' : 'Build cancelled by user');
  return cancelled !== null;
}

/**
 * Checks a JobRunOnCommit's ref and commit (docs/compatibility.md#builds-creating-builds): the ref must start with
 * `refs/` (400), exist (404) and reach the commit (400).
 */
export async function checkRefAndCommit(ctx: Context, projectId: number, refName: string, commitHash: string): Promise<void> {
  if (!refName.startsWith('refs/')) throw new BadRequest('Ref name should start with refs/');
  if (!isObjectId(commitHash)) throw new BadRequest(`Invalid commit hash: ${commitHash}`);
  const repo = ctx.repoPath(projectId);
  const head = await refHead(repo, refName);
  if (!head) throw new NotFound(`Ref not found: ${refName}`);
  const commit = await resolveCommit(repo, commitHash);
  if (!commit || !(await isAncestor(repo, commitHash, head, { missing: false }))) {
    throw new BadRequest('Specified commit is not reachable from specified ref');
  }
}

/**
 * Rebuild (docs/compatibility.md#builds-creating-builds): reuses the finished build's row — WAITING, dates cleared,
 * submitter = caller, new reason, storage wiped — and resubmits each required dependency that
 * is not SUCCESSFUL (reason `Resubmitted by dependent build`).
 *
 * @throws Conflict `Build #N not finished yet`; BadRequest when the spec or job is gone.
 */
export async function resubmitBuild(ctx: Context, build: BuildRow, reason: string, submitterId: number): Promise<void> {
  if (!FINISHED.includes(build.status)) throw new Conflict(`Build #${build.number} not finished yet`);
  const spec = await specAt(ctx.repoPath(build.projectId), build.commitHash);
  if (spec.kind === 'absent') throw new BadRequest(`Build spec not defined (project: ${build.projectId}, commit: ${build.commitHash})`);
  if (spec.kind === 'valid' && !findJob(spec.spec, build.jobName)) {
    throw new BadRequest(`Job not found (project: ${build.projectId}, commit: ${build.commitHash}, job: ${build.jobName})`);
  }
  const deps = await ctx.db
    .selectFrom('buildDependences')
    .innerJoin('builds', 'builds.id', 'buildDependences.dependencyId')
    .selectAll('builds')
    .where('buildDependences.dependentId', '=', build.id)
    .where('buildDependences.requireSuccessful', '=', 1)
    .where('builds.status', '<>', 'SUCCESSFUL')
    .execute();
  for (const dep of deps) {
    if (FINISHED.includes(dep.status)) await resubmitBuild(ctx, dep, 'Resubmitted by dependent build', submitterId);
  }
  // One transaction: no scheduler sees the build WAITING before its storage is wiped (a log it
  // opened at once would be removed under it), and a build not finished keeps its storage.
  await ctx.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('builds')
      .set({
        status: spec.kind === 'invalid' ? 'FAILED' : 'WAITING',
        submitDate: ctx.now(),
        pendingDate: null,
        runningDate: null,
        finishDate: spec.kind === 'invalid' ? ctx.now() : null,
        retryDate: null,
        submitterId,
        submitReason: reason.slice(0, 1000),
        cancellerId: null,
        agentId: null,
        version: null,
        description: null,
        paused: 0,
        retryCount: 0,
        leaseOwner: null,
        leaseExpires: null,
        jobWorkspace: null,
      })
      .where('id', '=', build.id)
      .where('status', 'in', FINISHED)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) throw new Conflict(`Build #${build.number} not finished yet`);
    await announceBuildsChanged(tx);
    await resetBuildStorage(ctx.config, build);
    if (spec.kind === 'invalid') await appendLog(ctx.config, build, ...spec.message.split('\n'), 'Job failed');
  });
  notifySchedulers();
}

/** A fresh pipeline id (every REST run and trigger gets one). */
export function newPipeline(): string {
  return randomUUID();
}

/**
 * A pipeline id (UUID-shaped) derived from `seed` and `index`: the same for a repeated run of
 * the same work (a journal entry reacted to again after a crash), so its builds are de-duplicated
 * instead of submitted twice.
 */
export function seededPipeline(seed: string, index: number): string {
  const hex = createHash('sha256').update(`${seed}:${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
