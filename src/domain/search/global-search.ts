/**
 * Global search (docs/compatibility.md#global-search): one text, searched among the projects,
 * pull requests, issues and builds the actor can see, and — for administrators, who alone may
 * list users — the users. Each kind is asked through its own query language, so what matches and
 * who may see it are the rules of the lists: a reference `demo#12` (or `#12`) is the number
 * criterion of that project (or of every visible one), anything else the fuzzy criterion `~text~`.
 * Nothing is counted beyond what is shown: a kind returns at most `limit` rows, and a kind the
 * actor cannot see returns none, with no total.
 */
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import type { BuildRow, IssueRow, ProjectRow, UserRow } from '../../db/schema.js';
import { queryBuilds } from '../builds/index.js';
import { queryIssues } from '../issues/index.js';
import { projectPathsByIds, queryProjects } from '../projects/index.js';
import { queryPullRequests, type PullRequestRow } from '../pulls/index.js';
import { queryUsers } from '../users/index.js';

/** The longest search text taken, in characters. */
export const MAX_SEARCH_LENGTH = 200;

/** What {@link globalSearch} found, by kind; each list is in its kind's default order. */
export interface GlobalSearchResults {
  /** The text searched (trimmed). */
  text: string;
  /** A reference `[project]#number` the text is, or null. */
  reference: { projectPath: string | null; number: number } | null;
  /** The query each conversation kind was asked (for "more" links to the lists). */
  queries: { pulls: string; issues: string; builds: string; projects: string };
  projects: ProjectRow[];
  pullRequests: PullRequestRow[];
  issues: IssueRow[];
  builds: BuildRow[];
  /** The paths of the projects of the pull requests, issues and builds found, by project id. */
  projectPaths: Map<number, string>;
  /** Users whose name, full name or email contains the text: administrators only, else empty. */
  users: Pick<UserRow, 'id' | 'name' | 'fullName'>[];
}

/** `demo#12`, `group/app#3`, `#12`: a project path (optional) and a number. */
const REFERENCE = /^(?:([\w.-]+(?:\/[\w.-]+)*))?#(\d{1,9})$/;

/** The fuzzy criterion of the query languages holding `text` literally (`\` and `~` escaped). */
const fuzzy = (text: string) => `~${text.replace(/[\\~]/g, (c) => `\\${c}`)}~`;

/**
 * Searches `text` across kinds for the actor of `ctx` (see the module comment).
 *
 * @param limit rows per kind (1–50).
 * @throws BadRequest when `text` is empty or longer than {@link MAX_SEARCH_LENGTH}.
 */
export async function globalSearch(ctx: Context, text: string, limit = 8): Promise<GlobalSearchResults> {
  const trimmed = text.trim();
  if (trimmed === '') throw new BadRequest('Type something to search for');
  if (trimmed.length > MAX_SEARCH_LENGTH) throw new BadRequest(`The search text is longer than ${MAX_SEARCH_LENGTH} characters`);
  const count = Math.min(Math.max(Math.trunc(limit), 1), 50);
  const match = REFERENCE.exec(trimmed);
  const reference = match ? { projectPath: match[1] ?? null, number: Number(match[2]) } : null;
  const inProject = (field: string) => (reference?.projectPath ? `"${field}" is "${reference.projectPath}" and ` : '');
  const queries = reference
    ? {
        pulls: `${inProject('Target Project')}#${reference.number}`,
        issues: `${inProject('Project')}#${reference.number}`,
        builds: `${inProject('Project')}#${reference.number}`,
        projects: reference.projectPath ? `"Path" is "${reference.projectPath}"` : '',
      }
    : { pulls: fuzzy(trimmed), issues: fuzzy(trimmed), builds: fuzzy(trimmed), projects: fuzzy(trimmed) };
  const [projects, pullRequests, issues, builds, users] = await Promise.all([
    queries.projects === '' ? [] : orNone(queryProjects(ctx, queries.projects, 0, count)),
    orNone(queryPullRequests(ctx, queries.pulls, 0, count)),
    orNone(queryIssues(ctx, queries.issues, 0, count)),
    orNone(queryBuilds(ctx, queries.builds, 0, count)),
    ctx.actor.isAdmin && !reference ? queryUsers(ctx, trimmed, 0, count) : [],
  ]);
  const projectPaths = await projectPathsByIds(ctx.db, [
    ...pullRequests.map((pr) => pr.targetProjectId),
    ...issues.map((issue) => issue.projectId),
    ...builds.map((build) => build.projectId),
  ]);
  return { text: trimmed, reference, queries, projects, pullRequests, issues, builds, projectPaths, users };
}

/**
 * The rows of a kind, or none when its language refuses the query — a reference to a project
 * that does not exist or cannot be seen is refused alike, so a refusal says nothing either way.
 */
async function orNone<T>(rows: Promise<T[]>): Promise<T[]> {
  try {
    return await rows;
  } catch (error) {
    if (error instanceof BadRequest) return [];
    throw error;
  }
}
