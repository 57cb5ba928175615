/**
 * Builds and pull requests together (docs/compatibility.md#builds-pull-request-current-builds): the request's current builds and
 * the branch-protection "required builds" (docs/compatibility.md#projects-branch-protection `jobNames`).
 */
import type { BuildRow, PullRequestRow } from '../../db/schema.js';
import { matchesPatterns } from '../../ci/patterns.js';
import type { Context } from '../context.js';
import { ancestorPaths } from '../projects/permissions.js';

interface StoredProtection {
  enabled?: unknown;
  branches?: unknown;
  jobNames?: unknown;
}

/**
 * Jobs required by the branch protections of a project (its own rules, then its ancestors')
 * that apply to `branch`: enabled rules whose `branches` pattern set matches.
 */
export async function requiredJobs(ctx: Context, projectId: number, branch: string): Promise<string[]> {
  const project = await ctx.db.selectFrom('projects').select('path').where('id', '=', projectId).executeTakeFirst();
  if (!project) return [];
  const rows = await ctx.db.selectFrom('projects').select(['path', 'setting']).where('path', 'in', ancestorPaths(project.path)).execute();
  rows.sort((a, b) => b.path.length - a.path.length);
  const jobs = new Set<string>();
  for (const row of rows) {
    if (!row.setting) continue;
    let protections: StoredProtection[] = [];
    try {
      const parsed = JSON.parse(row.setting) as { branchProtections?: StoredProtection[] };
      protections = Array.isArray(parsed.branchProtections) ? parsed.branchProtections : [];
    } catch {
      continue;
    }
    for (const p of protections) {
      if (p.enabled === false || !Array.isArray(p.jobNames)) continue;
      let applies = true;
      if (typeof p.branches === 'string' && p.branches.trim() !== '') {
        try {
          applies = matchesPatterns(p.branches, branch);
        } catch {
          applies = false;
        }
      }
      if (applies) for (const j of p.jobNames) if (typeof j === 'string') jobs.add(j);
    }
  }
  return [...jobs];
}

/** The request's builds on its current build commit (`buildCommitHash`), newest first. */
export async function currentBuildRows(ctx: Context, pr: Pick<PullRequestRow, 'id' | 'buildCommitHash'>): Promise<BuildRow[]> {
  if (!pr.buildCommitHash) return [];
  return ctx.db.selectFrom('builds').selectAll().where('requestId', '=', pr.id).where('commitHash', '=', pr.buildCommitHash).orderBy('id', 'desc').execute();
}

/**
 * Whether the branch protection's required jobs are satisfied: every required job has a current
 * build and all of them are SUCCESSFUL (docs/compatibility.md#builds-pull-request-current-builds).
 */
export async function requiredBuildsPassed(ctx: Context, pr: PullRequestRow): Promise<boolean> {
  const jobs = await requiredJobs(ctx, pr.targetProjectId, pr.targetBranch);
  if (jobs.length === 0) return true;
  const builds = await currentBuildRows(ctx, pr);
  return jobs.every((job) => {
    const mine = builds.filter((b) => b.jobName === job);
    return mine.length > 0 && mine.every((b) => b.status === 'SUCCESSFUL');
  });
}
