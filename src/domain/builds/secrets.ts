/**
 * Job secrets (reference/projects.md §3 `buildSetting.jobSecrets`): name/value pairs stored in a
 * project's setting and inherited from its ancestors by name (the nearest project wins).
 */
import type { Context } from '../context.js';
import { ancestorPaths } from '../permissions.js';

interface StoredSecret {
  name?: unknown;
  value?: unknown;
  archived?: unknown;
}

/** The job secrets visible to builds of a project, by name. */
export async function jobSecrets(ctx: Context, projectId: number): Promise<Record<string, string>> {
  const project = await ctx.db.selectFrom('projects').select('path').where('id', '=', projectId).executeTakeFirst();
  if (!project) return {};
  const paths = ancestorPaths(project.path);
  const rows = await ctx.db.selectFrom('projects').select(['path', 'setting']).where('path', 'in', paths).execute();
  rows.sort((a, b) => a.path.length - b.path.length);
  const result: Record<string, string> = {};
  for (const row of rows) {
    if (!row.setting) continue;
    let secrets: StoredSecret[] = [];
    try {
      const parsed = JSON.parse(row.setting) as { buildSetting?: { jobSecrets?: StoredSecret[] } };
      secrets = Array.isArray(parsed.buildSetting?.jobSecrets) ? parsed.buildSetting!.jobSecrets! : [];
    } catch {
      continue;
    }
    for (const s of secrets) {
      if (typeof s.name === 'string' && typeof s.value === 'string' && s.archived !== true) result[s.name] = s.value;
    }
  }
  return result;
}
