import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../db/database.js';
import { resolveCommit } from '../../git/repository.js';
import { antPathMatcher, antPathToLike, QuerySyntaxError } from '../../query/index.js';
import type { Context } from '../context.js';
import { findProjectByPath } from './projects.js';

/**
 * Ids of projects whose path matches an Ant-style pattern (case-insensitive): a LIKE pre-filter
 * in SQL, then the exact pattern in memory (linear-time, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input) when LIKE cannot
 * express it.
 *
 * @throws UserPatternError (400) for a pattern longer than 1,000 characters.
 */
export async function projectIdsMatchingPath(db: Db, pattern: string): Promise<number[]> {
  const like = antPathToLike(pattern);
  const rows = await db
    .selectFrom('projects')
    .select(['id', 'path'])
    .where(sql<SqlBool>`lower(path) like ${like.pattern} escape '\\'`)
    .execute();
  if (like.exact) return rows.map((r) => r.id);
  const exact = antPathMatcher(pattern);
  return rows.filter((r) => exact.test(r.path)).map((r) => r.id);
}

/**
 * `project:rev` (`fixed in commit`, `on commit`, docs/compatibility.md#issues) → the
 * project and the commit the revision names there.
 *
 * @throws QuerySyntaxError when the project is missing or unknown, or the revision names no commit.
 */
export async function projectCommit(ctx: Context, value: string): Promise<{ projectId: number; commit: string }> {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new QuerySyntaxError(`Project is not specified: ${value}`);
  const project = await findProjectByPath(ctx.db, value.slice(0, colon));
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${value.slice(0, colon)}`);
  const rev = value.slice(colon + 1);
  const commit = rev && !rev.startsWith('-') ? await resolveCommit(ctx.repoPath(project.id), rev) : null;
  if (!commit) throw new QuerySyntaxError(`Unable to find revision: ${value}`);
  return { projectId: project.id, commit };
}
