import { BadRequest } from '../../errors.js';
import { visitCommitStats } from '../../git/contributors.js';
import { branchHead, getDefaultBranch } from '../../git/repository.js';
import type { Context } from '../context.js';
import { objectRead } from '../object-reads.js';
import { loadProjectWith } from './permissions.js';
import { usersByVerifiedEmails } from '../users/index.js';

/** The ranking metric of Get Top Contributors. */
export type ContributionType = 'COMMITS' | 'ADDITIONS' | 'DELETIONS';

/** One ranked contributor (docs/compatibility.md#projects-endpoints item 11). */
export interface GitContributor {
  author: { name: string; emailAddress: string; when: number; tzOffset: number };
  totalContribution: { commits: number; additions: number; deletions: number };
  dailyContributions: Record<string, number>;
}

/** One author's contributions of one UTC day. */
interface DayTotals {
  commits: number;
  additions: number;
  deletions: number;
}

/** An author's contributions per UTC day (`yyyy-MM-dd`), newest day first; the name and email of their newest commit. */
interface AuthorHistory {
  name: string;
  email: string;
  days: Map<string, DayTotals>;
}

/** Estimated bytes in memory of an author's entry (names, map) and of one of their days. */
const AUTHOR_BYTES = 256;
const DAY_BYTES = 96;

/**
 * Every author's contributions per day (by lower-cased email) in the history of `head`, kept
 * with the other reads by object id ({@link objectRead}): a new push changes the head, so an
 * entry never goes stale. Built while git streams the history, so memory holds authors × days,
 * never the commits.
 */
function historyOf(repo: string, head: string): Promise<Map<string, AuthorHistory>> {
  return objectRead(
    repo,
    'contributors',
    [head],
    () => readHistory(repo, head),
    (authors) => [...authors.values()].reduce((n, a) => n + AUTHOR_BYTES + a.days.size * DAY_BYTES, 64),
  );
}

async function readHistory(repo: string, head: string): Promise<Map<string, AuthorHistory>> {
  const authors = new Map<string, AuthorHistory>();
  await visitCommitStats(repo, head, (commit) => {
    const email = commit.authorEmail.toLowerCase();
    let author = authors.get(email);
    if (!author) {
      author = { name: commit.authorName, email: commit.authorEmail, days: new Map() };
      authors.set(email, author);
    }
    const day = new Date(commit.authorTime).toISOString().slice(0, 10);
    let totals = author.days.get(day);
    if (!totals) {
      totals = { commits: 0, additions: 0, deletions: 0 };
      author.days.set(day, totals);
    }
    totals.commits += 1;
    totals.additions += commit.additions;
    totals.deletions += commit.deletions;
  });
  return authors;
}

function parseDay(text: string, field: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`)) || new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) !== text) {
    throw new BadRequest(`${field} should be in format yyyy-MM-dd: ${text}`);
  }
  return text;
}

/**
 * Get Top Contributors (docs/compatibility.md#projects-endpoints item 11): access permission; counts the commits
 * (merges excluded) of the default branch authored between `sinceDate` and `untilDate`
 * (`yyyy-MM-dd`, inclusive, UTC days), grouped by author email, ranked by `type` descending,
 * at most `count`. An author email verified by a Gitloom user shows that user's name and primary
 * email. No default branch → empty list. Statistics are cached per repository head.
 */
export async function topContributors(
  ctx: Context,
  projectId: number,
  params: { type: ContributionType; sinceDate: string; untilDate: string; count: number },
): Promise<GitContributor[]> {
  const { project } = await loadProjectWith(ctx, projectId, 'access');
  const since = parseDay(params.sinceDate, 'sinceDate');
  const until = parseDay(params.untilDate, 'untilDate');
  const repo = ctx.repoPath(project.id);
  const branch = await getDefaultBranch(repo);
  const head = branch === null ? null : await branchHead(repo, branch);
  if (head === null) return [];
  const byAuthor: { name: string; email: string; total: GitContributor['totalContribution']; daily: Record<string, number> }[] = [];
  const amountOf = (t: DayTotals) => (params.type === 'COMMITS' ? t.commits : params.type === 'ADDITIONS' ? t.additions : t.deletions);
  for (const author of (await historyOf(repo, head)).values()) {
    const total = { commits: 0, additions: 0, deletions: 0 };
    const daily: Record<string, number> = {};
    for (const [day, totals] of author.days) {
      if (day < since || day > until) continue;
      total.commits += totals.commits;
      total.additions += totals.additions;
      total.deletions += totals.deletions;
      daily[day] = amountOf(totals);
    }
    if (total.commits > 0) byAuthor.push({ name: author.name, email: author.email, total, daily });
  }
  const ranked = byAuthor.sort((a, b) => amountOf(b.total) - amountOf(a.total) || a.email.localeCompare(b.email)).slice(0, params.count);
  const emails = ranked.map((r) => r.email.toLowerCase());
  const users = await usersByVerifiedEmails(ctx.db, emails);
  const userByEmail = new Map(users.map((u) => [u.email, u]));
  const now = ctx.now();
  return ranked.map((r) => {
    const user = userByEmail.get(r.email.toLowerCase());
    return {
      author: { name: user ? (user.fullName ?? user.name) : r.name, emailAddress: user ? user.primaryEmail : r.email, when: now, tzOffset: 0 },
      totalContribution: r.total,
      dailyContributions: r.daily,
    };
  });
}
