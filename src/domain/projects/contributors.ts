import { LRUCache } from 'lru-cache';
import { BadRequest } from '../../errors.js';
import { commitStats, type CommitStat } from '../../git/contributors.js';
import { branchHead, getDefaultBranch } from '../../git/repository.js';
import type { Context } from '../context.js';
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

/** Estimated bytes of one commit's statistics in memory (the object and its author strings). */
const COMMIT_STAT_BYTES = 200;

/**
 * Parsed commit statistics per (repository, head commit), at most 48 MiB (estimated): a new push
 * changes the head, so entries never go stale. A read under way is shared by the requests asking.
 */
const statsCache = new LRUCache<string, CommitStat[]>({ maxSize: 48 * 1024 * 1024, sizeCalculation: (stats) => 256 + stats.length * COMMIT_STAT_BYTES });
const statsReading = new Map<string, Promise<CommitStat[]>>();

/** The statistics of every commit reachable from `head`, from the cache or read once however many ask. */
async function statsOf(repo: string, head: string): Promise<CommitStat[]> {
  const key = `${repo}\0${head}`;
  const cached = statsCache.get(key);
  if (cached) return cached;
  let reading = statsReading.get(key);
  if (!reading) {
    reading = commitStats(repo, head)
      .then((stats) => {
        statsCache.set(key, stats);
        return stats;
      })
      .finally(() => statsReading.delete(key));
    statsReading.set(key, reading);
  }
  return reading;
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
  const stats = statsOf(repo, head);
  const byAuthor = new Map<string, { name: string; email: string; total: GitContributor['totalContribution']; daily: Record<string, number> }>();
  for (const commit of await stats) {
    const day = new Date(commit.authorTime).toISOString().slice(0, 10);
    if (day < since || day > until) continue;
    const email = commit.authorEmail.toLowerCase();
    let entry = byAuthor.get(email);
    if (!entry) {
      entry = { name: commit.authorName, email: commit.authorEmail, total: { commits: 0, additions: 0, deletions: 0 }, daily: {} };
      byAuthor.set(email, entry);
    }
    entry.total.commits += 1;
    entry.total.additions += commit.additions;
    entry.total.deletions += commit.deletions;
    const amount = params.type === 'COMMITS' ? 1 : params.type === 'ADDITIONS' ? commit.additions : commit.deletions;
    entry.daily[day] = (entry.daily[day] ?? 0) + amount;
  }
  const metric = (t: GitContributor['totalContribution']) => (params.type === 'COMMITS' ? t.commits : params.type === 'ADDITIONS' ? t.additions : t.deletions);
  const ranked = [...byAuthor.values()].sort((a, b) => metric(b.total) - metric(a.total) || a.email.localeCompare(b.email)).slice(0, params.count);
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
