/**
 * OneDev 8.6's job match language, as used by a job secret's `authorization` (docs/compatibility.md#projects-settings `buildSetting.jobSecrets`; OneDev `io.onedev.server.job.match.JobMatch`, grammar JobMatch.g4):
 * `on branch "main" or submitted by group "release"`, `"Project" is "a/**"`, `not(...)`,
 * parentheses. The language is defined as data (JOB_MATCH in src/query/languages.ts) and read
 * by the shared query parser (`parseQuery`); this module turns the parsed criteria into a
 * {@link JobMatch} and evaluates it.
 */
import { matchPath } from '../../ci/patterns.js';
import { chainOperands, JOB_MATCH, parseQuery, QuerySyntaxError, wildcardMatcher, type Criteria } from '../../query/index.js';

/**
 * A parsed job match. A chain `a or b or c` is one `or` with three operands, so the depth of the
 * tree is that of the parentheses and `not`s, whatever the length of a chain.
 */
export type JobMatch =
  | { readonly type: 'onBranch'; readonly branch: string }
  | { readonly type: 'user' | 'group'; readonly name: string }
  | { readonly type: 'project'; readonly path: string }
  | { readonly type: 'job'; readonly name: string }
  | { readonly type: 'and' | 'or'; readonly operands: readonly JobMatch[] }
  | { readonly type: 'not'; readonly operand: JobMatch };

function toJobMatch(criteria: Criteria, jobCriteria: boolean): JobMatch {
  switch (criteria.kind) {
    case 'and':
    case 'or':
      return { type: criteria.kind, operands: chainOperands(criteria).map((c) => toJobMatch(c, jobCriteria)) };
    case 'not':
      return { type: 'not', operand: toJobMatch(criteria.operand, jobCriteria) };
    case 'operator':
      if (criteria.value !== null) {
        if (criteria.operator === 'on branch') return { type: 'onBranch', branch: criteria.value };
        if (criteria.operator === 'submitted by user') return { type: 'user', name: criteria.value };
        if (criteria.operator === 'submitted by group') return { type: 'group', name: criteria.value };
      }
      break;
    case 'field':
      if (criteria.value !== null) {
        if (criteria.field === 'Project') return { type: 'project', path: criteria.value };
        // part of the language, but OneDev refuses job criteria in a job secret's authorization
        if (criteria.field === 'Job') {
          if (!jobCriteria) throw new QuerySyntaxError('Job criteria is not supported here', criteria.column);
          return { type: 'job', name: criteria.value };
        }
      }
      break;
  }
  // JOB_MATCH admits no other criterion, so parseQuery never returns one
  throw new Error(`Job match criterion out of JOB_MATCH: ${JSON.stringify(criteria)}`);
}

/**
 * Parses a job secret's job match such as `on branch "main" or submitted by group "release"`
 * with the shared query parser (`parseQuery` with JOB_MATCH). Keywords are case-insensitive
 * (docs/compatibility.md#gitloom-differs-pagination-and-query-parameters leniency), `and` binds tighter than `or`; there is no `order by`.
 *
 * @throws QuerySyntaxError (400) saying what and where: `Unexpected 'main' at column 11`,
 *   `Unexpected end of job match at column N`, `Unterminated quoted string at column N`,
 *   `Field not found: X` for a field other than "Project" and "Job", `Unexpected 'order' at
 *   column N` for an `order by`, `Job match is empty` for a blank text, and `Job criteria is not
 *   supported here` for `"Job" is`, which OneDev refuses in a secret's authorization — and
 *   accepts (`options.jobCriteria`) in a job executor's `jobRequirement`
 *   (docs/compatibility.md#builds-job-executors).
 */
export function parseJobMatch(source: string, options: { jobCriteria?: boolean } = {}): JobMatch {
  const { criteria } = parseQuery(JOB_MATCH, source);
  if (criteria === null) throw new QuerySyntaxError('Job match is empty', 1);
  return toJobMatch(criteria, options.jobCriteria ?? false);
}

/** The users and groups a job match names, for checking that they exist. */
export function namesIn(match: JobMatch): { users: string[]; groups: string[] } {
  const users: string[] = [];
  const groups: string[] = [];
  const walk = (m: JobMatch): void => {
    if (m.type === 'user') users.push(m.name);
    else if (m.type === 'group') groups.push(m.name);
    else if (m.type === 'and' || m.type === 'or') m.operands.forEach(walk);
    else if (m.type === 'not') walk(m.operand);
  };
  walk(match);
  return { users, groups };
}

/** The wildcards a job match holds: its `on branch`, `"Project" is` and `"Job" is` values. */
export function patternsIn(match: JobMatch): string[] {
  switch (match.type) {
    case 'onBranch':
      return [match.branch];
    case 'project':
      return [match.path];
    case 'job':
      return [match.name];
    case 'and':
    case 'or':
      return match.operands.flatMap(patternsIn);
    case 'not':
      return patternsIn(match.operand);
    default:
      return [];
  }
}

/** What a job match is evaluated against (OneDev's JobMatchContext). */
export interface JobMatchSubject {
  /** Path of the project whose build asks. */
  readonly projectPath: string;
  /** `on branch "p"` holds when one of these branches matches `p` (one branch, or the branches holding a commit). */
  readonly branches: readonly string[];
  /** Login name of the user the build acts for (lower case); null when none. */
  readonly userName: string | null;
  /** Names of that user's groups (lower case). */
  readonly groupNames: ReadonlySet<string>;
  /** The job's name, for `"Job" is` (job executors' requirements only); a match naming a job fails without it. */
  readonly jobName?: string;
}

/**
 * Evaluates a parsed job match. `on branch` and `"Project" is` use path wildcards (`*`, `**`,
 * `?`; OneDev `WildcardUtils.matchPath`); `"Job" is` a `*` wildcard of the whole name; user,
 * group and job names compare case-insensitively.
 */
export function jobMatches(match: JobMatch, subject: JobMatchSubject): boolean {
  switch (match.type) {
    case 'onBranch':
      return subject.branches.some((b) => matchPath(match.branch, b));
    case 'user':
      return subject.userName !== null && subject.userName === match.name.toLowerCase();
    case 'group':
      return subject.groupNames.has(match.name.toLowerCase());
    case 'project':
      return matchPath(match.path, subject.projectPath);
    case 'job':
      return subject.jobName !== undefined && wildcardMatcher(match.name).test(subject.jobName);
    case 'and':
      return match.operands.every((m) => jobMatches(m, subject));
    case 'or':
      return match.operands.some((m) => jobMatches(m, subject));
    case 'not':
      return !jobMatches(match.operand, subject);
  }
}
