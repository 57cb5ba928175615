/**
 * The commit query of the repository API (`GET /repositories/{projectId}/commits?query=…&count=N`,
 * docs/compatibility.md#gitloom-differs-additions-to-the-interface): the query parsed by src/query/commit-query.ts, its revisions, users and dates
 * resolved here, and the selection run with `git log` (src/git/commit-log.ts).
 */
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../errors.js';
import { logCommits, type CommitLogQuery } from '../../git/commit-log.js';
import { getDefaultBranch, listRefs, refHead, resolveCommit } from '../../git/repository.js';
import { parseCommitQuery, type CommitCriterion } from '../../query/commit-query.js';
import { parseQueryDate, QuerySyntaxError } from '../../query/index.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { verifiedEmailAddresses } from '../users/index.js';
import { Provided } from '../providers.js';

/**
 * What the commit query asks of builds, the area above repositories (src/domain/providers.ts):
 * the commit of build number `number` of project `projectId`, null when there is none. Filled at
 * start-up by src/domain/event-handlers.ts.
 */
export const buildCommit = new Provided<(db: Db, projectId: number, number: number) => Promise<string | null>>('the commit of a build');

/** The most commits one query returns (OneDev's limit). */
export const MAX_COMMITS = 10_000;

type RevisionCriterion = Extract<CommitCriterion, { type: 'revision' }>;

async function revisionCommit(ctx: Context, projectId: number, repo: string, c: RevisionCriterion): Promise<string> {
  const at = ` at column ${c.column}`;
  const value = c.value ?? '';
  let hash: string | null = null;
  switch (c.kind) {
    case 'default-branch': {
      const branch = await getDefaultBranch(repo);
      if (branch === null) throw new QuerySyntaxError(`No default branch${at}`, c.column);
      hash = await refHead(repo, `refs/heads/${branch}`);
      break;
    }
    case 'branch':
      hash = await refHead(repo, `refs/heads/${value}`);
      if (!hash) throw new QuerySyntaxError(`Unable to find branch: ${value}${at}`, c.column);
      break;
    case 'tag':
      hash = (await refHead(repo, `refs/tags/${value}`)) ? await resolveCommit(repo, `refs/tags/${value}`) : null;
      if (!hash) throw new QuerySyntaxError(`Unable to find tag: ${value}${at}`, c.column);
      break;
    case 'commit':
      hash = value.startsWith('-') ? null : await resolveCommit(repo, value);
      if (!hash) throw new QuerySyntaxError(`Unable to find commit: ${value}${at}`, c.column);
      break;
    case 'build': {
      const number = /^#?(\d{1,15})$/.exec(value);
      const commit = number ? await buildCommit.ask(ctx.db, projectId, Number(number[1])) : null;
      if (!commit) throw new QuerySyntaxError(`Unable to find build: ${value}${at}`, c.column);
      hash = commit;
      break;
    }
  }
  if (!hash) throw new QuerySyntaxError(`Unable to find revision${at}`, c.column);
  return hash;
}

/** The caller's verified email addresses as `<email>` author patterns (`authored-by-me`, `committed-by-me`). */
async function myEmails(ctx: Context, column: number): Promise<string[]> {
  if (ctx.actor.userId === ANONYMOUS_ID) throw new QuerySyntaxError(`Please login to perform this query at column ${column}`, column);
  const emails = await verifiedEmailAddresses(ctx.db, ctx.actor.userId);
  // no verified address: a pattern no identity line has, so nothing matches
  return emails.length > 0 ? emails.map((email) => `<${email}>`) : ['<>'];
}

function date(text: string, column: number, now: Date): Date {
  try {
    return parseQueryDate(text, now);
  } catch (error) {
    if (error instanceof QuerySyntaxError) throw new QuerySyntaxError(`${error.message} at column ${column}`, column);
    throw error;
  }
}

/**
 * Runs a commit query over a project's repository: read code.
 *
 * Semantics (OneDev 8.6 CommitQuery): `branch(x)`, `tag(x)`, `commit(x)`, `build(N)`,
 * `default-branch` and their `until …` forms include that commit's history, `since …` leaves
 * out its history (so `since tag(v1) until tag(v2)` is `v1..v2`); without any including
 * revision every branch and tag is searched. `author(…)`, `committer(…)` and `message(…)` are
 * case-insensitive `*`-wildcards matched anywhere; `authored-by-me`/`committed-by-me` match the
 * caller's verified emails; `before(date)`/`after(date)` bound the commit date (natural-language
 * dates as in the other query languages); `path(p)` keeps commits touching p. Criteria of one
 * kind are alternatives, different kinds all apply.
 *
 * @param text the query; empty = every commit.
 * @param count the most hashes returned, 0…10000.
 * @param scope a commit hash the caller resolved already: the query searches its history, as
 *   `commit(<hash>)` would, without asking git for it again.
 * @returns 40-hex hashes, newest first.
 * @throws QuerySyntaxError (400) with the column for syntax errors, unknown branches, tags,
 *   commits, builds, unreadable dates, or `authored-by-me` when anonymous; BadRequest for a bad
 *   count.
 */
export async function queryCommits(ctx: Context, projectId: number, text: string, count: number, scope?: string): Promise<string[]> {
  if (count > MAX_COMMITS) throw new BadRequest(`Count should not be greater than ${MAX_COMMITS}`);
  if (count < 0) throw new BadRequest('Count should not be negative');
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const criteria = parseCommitQuery(text);
  const now = new Date(ctx.now());
  const query = {
    include: [] as string[],
    exclude: [] as string[],
    authors: [] as string[],
    committers: [] as string[],
    messages: [] as string[],
    paths: [] as string[],
    before: null as Date | null,
    after: null as Date | null,
    max: count,
  } satisfies CommitLogQuery;
  if (scope !== undefined) query.include.push(scope);
  for (const c of criteria) {
    switch (c.type) {
      case 'revision':
        (c.scope === 'since' ? query.exclude : query.include).push(await revisionCommit(ctx, project.id, repo, c));
        break;
      case 'authored-by-me':
        query.authors.push(...(await myEmails(ctx, c.column)));
        break;
      case 'committed-by-me':
        query.committers.push(...(await myEmails(ctx, c.column)));
        break;
      case 'author':
        query.authors.push(c.value);
        break;
      case 'committer':
        query.committers.push(c.value);
        break;
      case 'message':
        query.messages.push(c.value);
        break;
      case 'path': {
        const path = c.value.replace(/^\/+/, '');
        if (path) query.paths.push(path);
        break;
      }
      case 'before':
        query.before = date(c.value, c.column, now);
        break;
      case 'after':
        query.after = date(c.value, c.column, now);
        break;
    }
  }
  if (query.include.length === 0) {
    if ((await listRefs(repo, ['refs/heads/', 'refs/tags/'])).size === 0) return [];
  }
  return logCommits(repo, query);
}
