/**
 * Trigger Job (docs/compatibility.md#builds-trigger-job): runs a job on the head of
 * a branch or tag for the owner of an access token given in the query string, with every other
 * query param as a job param. Statuses follow docs/compatibility.md#gitloom-differs-errors.
 */
import type { ParamMap } from '../../ci/triggers.js';
import { refHead, resolveCommit } from '../../git/repository.js';
import { BadRequest, NotFound, Unauthorized } from '../../errors.js';
import { authenticateBearer } from '../auth/index.js';
import { refuseReadOnlyToken } from '../actor.js';
import { withActor, type Context } from '../context.js';
import { findProjectByPath, jobPermissions, projectPermissions } from '../projects/index.js';
import { deny } from '../actor.js';
import { newPipeline, submitBuild } from './submit.js';

/** The query of a trigger-job call, required params already checked. */
export interface TriggerJobInput {
  /** Project path (case-insensitive). */
  project: string;
  job: string;
  accessToken: string;
  branch?: string;
  tag?: string;
  /** Every other query param; a repeated key is a multi-valued param. */
  params: ParamMap;
}

/** Build reason of triggered runs (docs/compatibility.md#builds-endpoints). */
export const TRIGGER_REASON = 'Triggered via restful api';

/**
 * Submits the job on the ref's head commit as the token's owner, with a fresh pipeline; every
 * declared param must be supplied and none may be unknown (as for Run Build).
 *
 * @returns the new build id.
 * @throws Unauthorized `Invalid access token` (unknown or expired), checked first, whatever the
 *   project; NotFound `Project not found: p` (also when the token's owner cannot see it);
 *   Forbidden `GITLOOM_ERR_TOKEN_READ_ONLY` for a read-only token; BadRequest `Either branch or tag
 *   should be specified` / `…, but not both`; NotFound `Ref not found: refs/heads/x`; Forbidden
 *   without RunJob on the job; BadRequest for a missing spec or job and param errors.
 */
export async function triggerJob(ctx: Context, input: TriggerJobInput): Promise<number> {
  // the token first: without a valid one the answer is the same whatever the project, so an
  // anonymous caller learns nothing about which private projects exist
  let actor;
  try {
    actor = await authenticateBearer(ctx.db, input.accessToken, ctx.now());
  } catch (error) {
    if (error instanceof Unauthorized) throw new Unauthorized('Invalid access token');
    throw error;
  }
  const userCtx = withActor(ctx, actor);
  const project = await findProjectByPath(ctx.db, input.project);
  if (!project) throw new NotFound(`Project not found: ${input.project}`);
  const permissions = await projectPermissions(userCtx, project);
  if (!permissions.access) throw new NotFound(`Project not found: ${input.project}`);
  // running a job is a change, whatever the method (docs/compatibility.md#gitloom-differs-sessions-and-tokens)
  refuseReadOnlyToken(actor);
  if (input.branch === undefined && input.tag === undefined) throw new BadRequest('Either branch or tag should be specified');
  if (input.branch !== undefined && input.tag !== undefined) throw new BadRequest('Either branch or tag should be specified, but not both');
  const refName = input.branch !== undefined ? `refs/heads/${input.branch}` : `refs/tags/${input.tag}`;
  const repo = userCtx.repoPath(project.id);
  // an annotated tag builds the commit it points to
  const head = await refHead(repo, refName);
  const commitHash = head && (await resolveCommit(repo, head));
  if (!commitHash) throw new NotFound(`Ref not found: ${refName}`);
  if (!jobPermissions(permissions, input.job, false).runJob) deny(actor);
  return submitBuild(userCtx, {
    projectId: project.id,
    commitHash,
    refName,
    jobName: input.job,
    params: input.params,
    reason: TRIGGER_REASON,
    pipeline: newPipeline(),
    submitterId: actor.userId,
    requestId: null,
    strictParams: true,
  });
}
