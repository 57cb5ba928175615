/**
 * Automatic job triggers (docs/compatibility.md#builds-triggers) and the reactions to a
 * finished build (dependency-finished triggers, `!RunJobAction` post-build actions, docs/compatibility.md#builds-build-spec). The
 * event bus calls these as the system user; failures of one job never stop the others.
 */
import { evaluateCondition, type FinalStatus } from '../../ci/conditions.js';
import { BUILD_SPEC_FILE, type BuildSpec } from '../../ci/build-spec.js';
import { expandParams, isSkipCommitMessage, matchesTrigger, matchTriggers, type ParamMap, type TriggerEvent, type TriggerMatch } from '../../ci/triggers.js';
import type { RefChange } from '../events.js';
import { readCommit } from '../../git/commits.js';
import { branchesContaining, changedPaths } from '../../git/files.js';
import { refHead, resolveCommit } from '../../git/refs.js';
import { SYSTEM_ID, type Context } from '../context.js';
import { findPullRequestRow, getMergePreview, getPullRequestRow, latestUpdate } from '../pulls/index.js';
import { findProjectRow, getProjectRow, requiredJobs } from '../projects/index.js';
import { findJob, lastReadableSpec, specAt } from './spec.js';
import { readLog } from './storage.js';
import { createFailedBuild, FINISHED, jobRefBuilds, newPipeline, seededPipeline, submitBuild, triggeredRequest } from './submit.js';
import { notifySchedulers } from './wakeup.js';

/**
 * Submits the builds of trigger matches; a submission the spec refuses gives a FAILED build
 * with the reason (`failWhenRefused`). Other failures are collected without stopping the other
 * submissions and the first is thrown at the end (the caller logs it, or retries).
 */
async function submitMatches(
  ctx: Context,
  matches: TriggerMatch[],
  base: { projectId: number; commitHash: string; requestId: number | null; pipeline?: string; pipelineSeed?: string },
): Promise<number[]> {
  const ids: number[] = [];
  const errors: unknown[] = [];
  for (const [index, match] of matches.entries()) {
    if (!match.refName) continue;
    const pipeline = base.pipeline ?? (base.pipelineSeed !== undefined ? seededPipeline(base.pipelineSeed, index) : newPipeline());
    for (const params of match.paramSets) {
      try {
        const at = { projectId: base.projectId, commitHash: base.commitHash, refName: match.refName, requestId: base.requestId, pipeline };
        ids.push(await submitBuild(ctx, triggeredRequest(match, params, at)));
      } catch (error) {
        errors.push(error);
      }
    }
  }
  if (errors.length > 0) throw errors[0];
  return ids;
}

/**
 * Jobs of an invalid spec's readable part that the event would run; a trigger whose own
 * fields are unreadable counts as not matching.
 */
function partialMatches(partial: BuildSpec | null, event: TriggerEvent): TriggerMatch[] {
  if (!partial) return [];
  const names = new Set<string>();
  return partial.jobs.flatMap((job) => {
    if (!job.name || names.has(job.name)) return [];
    names.add(job.name);
    try {
      const m = matchesTrigger(job, event);
      return m ? [m] : [];
    } catch {
      return [];
    }
  });
}

/**
 * An event met an invalid build spec (docs/compatibility.md#builds-creating-builds step 1 — Gitloom never drops the
 * event silently): each job whose readable triggers match gets a FAILED build with the
 * validation message in its log (pull request events; pushes: {@link failUnreadablePush}).
 */
async function failInvalidSpec(
  ctx: Context,
  spec: { message: string; partial: BuildSpec | null },
  event: TriggerEvent,
  base: { projectId: number; commitHash: string; requestId: number | null },
): Promise<number[]> {
  const matches = partialMatches(spec.partial, event).filter((m) => m.refName !== null);
  const targets = matches.map((m) => ({ jobName: m.job.name, refName: m.refName!, reason: m.reason }));
  const ids: number[] = [];
  for (const t of targets) {
    ids.push(
      await createFailedBuild(
        ctx,
        {
          projectId: base.projectId,
          commitHash: base.commitHash,
          refName: t.refName,
          jobName: t.jobName,
          params: {},
          reason: t.reason,
          pipeline: newPipeline(),
          submitterId: SYSTEM_ID,
          requestId: base.requestId,
        },
        spec.message,
      ),
    );
  }
  return ids;
}

/**
 * A pushed ref whose commit has an unreadable spec (docs/compatibility.md#builds-creating-builds step 1), without
 * flooding a mirror push of many refs: at most one FAILED build per commit, and only for a ref
 * that would have been built — a job of the spec's readable part, else of the last readable
 * version of the spec in the commit's history (spec.ts), has a trigger matching the event. With
 * no readable version at all a branch update still gets one FAILED build (the spec is broken
 * from the start), a tag never does.
 */
async function failUnreadablePush(
  ctx: Context,
  spec: { message: string; partial: BuildSpec | null },
  event: TriggerEvent,
  base: { projectId: number; commitHash: string; requestId: null },
  fallback: { refName: string; reason: string } | null,
): Promise<void> {
  const built = await ctx.db
    .selectFrom('builds')
    .select('id')
    .where('projectId', '=', base.projectId)
    .where('commitHash', '=', base.commitHash)
    .where('requestId', 'is', null)
    .limit(1)
    .executeTakeFirst();
  if (built) return;
  if (!fallback) return;
  let match = partialMatches(spec.partial, event).find((m) => m.refName !== null);
  let target: { jobName: string; refName: string; reason: string } | null = match
    ? { jobName: match.job.name, refName: match.refName!, reason: match.reason }
    : null;
  if (!target) {
    const readable = await lastReadableSpec(ctx.repoPath(base.projectId), base.commitHash);
    match = readable ? matchTriggers(readable, event).find((m) => m.refName !== null) : undefined;
    if (match) target = { jobName: match.job.name, refName: match.refName!, reason: match.reason };
    else if (!readable && event.kind === 'branch-update') target = { jobName: BUILD_SPEC_FILE, ...fallback };
  }
  if (!target) return;
  await createFailedBuild(
    ctx,
    {
      projectId: base.projectId,
      commitHash: base.commitHash,
      refName: target.refName,
      jobName: target.jobName,
      params: {},
      reason: target.reason,
      pipeline: newPipeline(),
      submitterId: SYSTEM_ID,
      requestId: null,
    },
    spec.message,
  );
}

/**
 * After a push or merge: branch updates and tag creations run the matching jobs of the spec at
 * the new commit (in pipelines derived from `pipelineSeed` when given, so running this again for
 * the same change reuses the builds it submitted). Pull requests whose branches moved get their
 * triggers evaluated once they are checked (`pullRequestChecked`).
 */
export async function triggerOnRefsUpdated(ctx: Context, projectId: number, changes: readonly RefChange[], pipelineSeed?: string): Promise<void> {
  const project = await findProjectRow(ctx.db, projectId);
  if (!project) return;
  const repo = ctx.repoPath(projectId);
  for (const change of changes) {
    if (!change.newHash) continue;
    let event: TriggerEvent;
    let commit = change.newHash;
    let fallback: { refName: string; reason: string } | null;
    if (change.ref.startsWith('refs/heads/')) {
      const message = (await readCommit(repo, change.newHash)).message;
      const changedFiles = change.oldHash ? await changedPaths(repo, change.oldHash, change.newHash) : null;
      const branch = change.ref.slice('refs/heads/'.length);
      event = { kind: 'branch-update', projectPath: project.path, branch, changedFiles, commitMessage: message };
      fallback = isSkipCommitMessage(message) ? null : { refName: change.ref, reason: `Branch '${branch}' is updated` };
    } else if (change.ref.startsWith('refs/tags/')) {
      const peeled = await resolveCommit(repo, change.newHash);
      if (!peeled) continue;
      commit = peeled;
      const tag = change.ref.slice('refs/tags/'.length);
      event = { kind: 'tag-create', projectPath: project.path, tag, commitBranches: await branchesContaining(repo, commit) };
      fallback = { refName: change.ref, reason: `Tag '${tag}' is created` };
    } else {
      continue;
    }
    const spec = await specAt(repo, commit);
    if (spec.kind === 'invalid') {
      await failUnreadablePush(ctx, spec, event, { projectId, commitHash: commit, requestId: null }, fallback);
      continue;
    }
    if (spec.kind !== 'valid') continue;
    await submitMatches(ctx, matchTriggers(spec.spec, event), {
      projectId,
      commitHash: commit,
      requestId: null,
      ...(pipelineSeed !== undefined && { pipelineSeed: `${pipelineSeed}:${change.ref}` }),
    });
  }
}

/**
 * Pull request opened or updated, once checked (`!PullRequestUpdateTrigger`): builds the merge preview commit
 * (`refs/pulls/N/merge`) for every matching job that has no build on that commit yet.
 */
export async function triggerOnPullRequest(ctx: Context, requestId: number): Promise<void> {
  const initial = await findPullRequestRow(ctx.db, requestId);
  if (!initial || initial.status !== 'OPEN') return;
  await getMergePreview(ctx, requestId);
  const pr = await getPullRequestRow(ctx.db, requestId);
  if (pr.status !== 'OPEN' || !pr.buildCommitHash) return;
  const repo = ctx.repoPath(pr.targetProjectId);
  const spec = await specAt(repo, pr.buildCommitHash);
  if (spec.kind === 'absent') return;
  const project = await getProjectRow(ctx.db, pr.targetProjectId);
  const head = (await latestUpdate(ctx.db, pr.id)).headCommitHash;
  const event: TriggerEvent = {
    kind: 'pull-request',
    action: 'update',
    projectPath: project.path,
    number: pr.number,
    targetBranch: pr.targetBranch,
    sourceBranch: pr.sourceBranch,
    changedFiles: await changedPaths(repo, pr.baseCommitHash, head),
    commitMessage: (await readCommit(repo, head)).message,
    requiredJobs: await requiredJobs(ctx, pr.targetProjectId, pr.targetBranch),
  };
  const existing = new Set(
    (await ctx.db.selectFrom('builds').select('jobName').where('requestId', '=', pr.id).where('commitHash', '=', pr.buildCommitHash).execute()).map(
      (b) => b.jobName,
    ),
  );
  const base = { projectId: pr.targetProjectId, commitHash: pr.buildCommitHash, requestId: pr.id };
  if (spec.kind === 'invalid') {
    if (existing.size > 0) return;
    await failInvalidSpec(ctx, spec, event, base);
    return;
  }
  const matches = matchTriggers(spec.spec, event).filter((m) => !existing.has(m.job.name));
  await submitMatches(ctx, matches, base);
}

/**
 * A pull request was merged or discarded (`!PullRequestMergeTrigger`, `!PullRequestDiscardTrigger`,
 * docs/compatibility.md#builds-triggers): the matching jobs of the spec run on the merge commit (merged) or
 * the target branch head at discard time, on `refs/pulls/N/merge` with the request set.
 * An invalid spec gives FAILED builds for the jobs it would run.
 */
export async function triggerOnPullRequestClosed(ctx: Context, requestId: number): Promise<void> {
  const pr = await findPullRequestRow(ctx.db, requestId);
  if (!pr || pr.status === 'OPEN') return;
  const repo = ctx.repoPath(pr.targetProjectId);
  const targetHead = await refHead(repo, `refs/heads/${pr.targetBranch}`);
  const commit = pr.status === 'MERGED' ? (pr.previewMergeCommitHash ?? targetHead) : targetHead;
  if (!commit) return;
  const spec = await specAt(repo, commit);
  if (spec.kind === 'absent') return;
  const project = await getProjectRow(ctx.db, pr.targetProjectId);
  const head = (await latestUpdate(ctx.db, pr.id)).headCommitHash;
  const event: TriggerEvent = {
    kind: 'pull-request',
    action: pr.status === 'MERGED' ? 'merge' : 'discard',
    projectPath: project.path,
    number: pr.number,
    targetBranch: pr.targetBranch,
    sourceBranch: pr.sourceBranch,
    changedFiles: await changedPaths(repo, pr.baseCommitHash, head),
  };
  const base = { projectId: pr.targetProjectId, commitHash: commit, requestId: pr.id };
  if (spec.kind === 'invalid') {
    await failInvalidSpec(ctx, spec, event, base);
    return;
  }
  await submitMatches(ctx, matchTriggers(spec.spec, event), base);
}

/**
 * A build reached a final status (src/domain/builds/finish.ts, after its commit): wakes the schedulers (dependents may be ready), runs the
 * `!DependencyFinishedTrigger` jobs (same commit, ref, request and pipeline) and the job's
 * `!RunJobAction`s whose condition holds (reason `Post build action of job 'X'`).
 */
export async function onBuildFinished(ctx: Context, buildId: number): Promise<void> {
  notifySchedulers({ finished: buildId });
  const build = await ctx.db.selectFrom('builds').selectAll().where('id', '=', buildId).executeTakeFirst();
  if (!build || !FINISHED.includes(build.status)) return;
  const project = await findProjectRow(ctx.db, build.projectId);
  if (!project) return;
  const spec = await specAt(ctx.repoPath(build.projectId), build.commitHash);
  if (spec.kind !== 'valid') return;
  const rows = await ctx.db.selectFrom('buildParams').selectAll().where('buildId', '=', buildId).orderBy('id').execute();
  const params: ParamMap = {};
  for (const r of rows) {
    if (r.type === 'Secret') continue;
    params[r.name] ??= [];
    if (r.value !== null) params[r.name].push(r.value);
  }
  const status = build.status as FinalStatus;
  const base = { projectId: build.projectId, commitHash: build.commitHash, requestId: build.requestId, pipeline: build.pipeline };
  await submitMatches(
    ctx,
    matchTriggers(spec.spec, {
      kind: 'dependency-finished',
      projectPath: project.path,
      jobName: build.jobName,
      status,
      params,
      refName: build.refName,
    }),
    base,
  );

  const job = findJob(spec.spec, build.jobName);
  if (!job || job.postBuildActions.length === 0) return;
  const previous = await jobRefBuilds(ctx.db, build)
    .select('status')
    .where('number', '<', build.number)
    .where('status', 'in', FINISHED)
    .orderBy('number', 'desc')
    .limit(1)
    .executeTakeFirst();
  const log = await readLog(ctx.config, build);
  for (const action of job.postBuildActions) {
    const matches = evaluateCondition(action.conditionAst, {
      status,
      previousStatus: (previous?.status as FinalStatus | undefined) ?? null,
      branch: build.refName.startsWith('refs/heads/') ? build.refName.slice('refs/heads/'.length) : null,
      logContains: (t) => log.includes(t),
      params,
    });
    const target = findJob(spec.spec, action.jobName);
    if (!matches || !target) continue;
    for (const targetParams of expandParams(target, action.jobParams, params)) {
      await submitBuild(ctx, {
        ...base,
        refName: build.refName,
        jobName: target.name,
        params: targetParams,
        secretParams: new Set(action.jobParams.filter((p) => p.secret).map((p) => p.name)),
        reason: `Post build action of job '${job.name}'`,
        submitterId: SYSTEM_ID,
        failWhenRefused: true,
      });
    }
  }
}
