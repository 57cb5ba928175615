/**
 * The builds a branch's protection requires (docs/compatibility.md#projects-branch-protection
 * `jobNames`): pull requests wait for them before merging.
 */
import { matchesPatterns } from '../../ci/patterns.js';
import type { Context } from '../context.js';
import { ancestorSettings } from './ancestor-settings.js';

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
  const rows = (await ancestorSettings(ctx.db, project.path)).reverse();
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
