/**
 * The job secrets a build receives (docs/compatibility.md#gitloom-differs-untrusted-builds): those
 * of its project and ancestors (src/domain/projects/job-secrets.ts) that the build is authorized for.
 */
import { parsePatternSet, patternSetMatches, type PatternSet } from '../../ci/patterns.js';
import type { BuildRow } from '../../db/schema.js';
import { Unauthorized } from '../../errors.js';
import { isAncestor } from '../../git/merge.js';
import { branchesContaining } from '../../git/files.js';
import { refHead } from '../../git/refs.js';
import { actorOfUser } from '../auth/index.js';
import { withActor, type Context } from '../context.js';
import { decryptedSecret, getProjectRow, hasValue, hierarchySecrets, projectPermissions, type SecretDefinition } from '../projects/index.js';
import { findPullRequestRow } from '../pulls/index.js';
import { type JobMatch, jobMatches, parseJobMatch } from '../query/index.js';
import { groupNamesByIds } from '../access/index.js';

/** A Secret-typed param value that is the secret itself rather than a job secret's name (docs/compatibility.md#builds-json). */
const SECRET_LITERAL_PREFIX = '$OneDev-Secret-Literal$';

/** One context a secret's branch limits are checked in (OneDev's JobMatchContext). */
interface BranchSubject {
  /** The branch the build is of, or (for a build of a tag or another ref) the branches holding its commit. */
  branches: string[];
  /** Whether `branches` are those holding the commit: then even an unlimited secret needs one. */
  holdingCommit: boolean;
  /** The user the build acts for: the pull request's author, else the build's submitter. */
  userId: number;
}

/** Who may see the job secrets of a build: nobody (with the reason), or those contexts, each of which must pass. */
type Audience = { withheld: string } | { subjects: BranchSubject[]; denial: string };

/** Whether a user holds Code Write on a project (docs/compatibility.md#gitloom-differs-untrusted-builds); false for a user who no longer exists. */
async function writesTo(ctx: Context, userId: number, project: { id: number; path: string }): Promise<boolean> {
  let actor;
  try {
    actor = await actorOfUser(ctx.db, userId, ctx.now());
  } catch (e) {
    if (e instanceof Unauthorized) return false;
    throw e;
  }
  return (await projectPermissions(withActor(ctx, actor), project)).writeCode;
}

/**
 * The audience of a build's secrets (docs/compatibility.md#gitloom-differs-untrusted-builds; OneDev `JobAuthorizationContext.getSecretValue`).
 *
 * A build of a pull request whose commit is not yet on the target branch runs the request's
 * code: it gets no secret when the request comes from a fork (another project, whose pushes this
 * project never vetted) or when its author lacks Code Write on the project; otherwise a secret
 * must be authorized for both the source and the target branch, as in OneDev. A same-project
 * request's head was pushed to this project, which takes Code Write, so the author is the one
 * left to check. A pull request build whose commit is on the target branch (run when the request
 * was merged or discarded) runs accepted code and counts as a build of the target branch.
 * A branch build is checked against its branch; a build of a tag or another ref against the
 * branches holding its commit (OneDev's `isCommitOnBranch`).
 */
async function audienceOf(ctx: Context, build: BuildRow, project: { id: number; path: string }): Promise<Audience> {
  const repo = ctx.repoPath(build.projectId);
  if (build.requestId !== null) {
    const pr = await findPullRequestRow(ctx.db, build.requestId);
    if (!pr) return { withheld: 'its pull request no longer exists' };
    const targetHead = await refHead(repo, `refs/heads/${pr.targetBranch}`);
    if (targetHead !== null && (await isAncestor(repo, build.commitHash, targetHead, { missing: false }))) {
      return {
        subjects: [{ branches: [pr.targetBranch], holdingCommit: false, userId: pr.submitterId }],
        denial: `not authorized for branch '${pr.targetBranch}'`,
      };
    }
    if (pr.sourceProjectId !== build.projectId) return { withheld: 'pull request from a fork' };
    if (!(await writesTo(ctx, pr.submitterId, project))) return { withheld: "the pull request's author has no write access to the project" };
    return {
      subjects: [pr.sourceBranch, pr.targetBranch].map((branch) => ({ branches: [branch], holdingCommit: false, userId: pr.submitterId })),
      denial: `not authorized for pull request from branch '${pr.sourceBranch}' to '${pr.targetBranch}'`,
    };
  }
  if (build.refName.startsWith('refs/heads/')) {
    const branch = build.refName.slice('refs/heads/'.length);
    return { subjects: [{ branches: [branch], holdingCommit: false, userId: build.submitterId }], denial: `not authorized for branch '${branch}'` };
  }
  const branches = await branchesContaining(repo, build.commitHash);
  return { subjects: [{ branches, holdingCommit: true, userId: build.submitterId }], denial: 'its commit is on no authorized branch' };
}

/** The login name (lower case) and group names (lower case) of a user, for `submitted by` criteria. */
export interface UserFacts {
  userName: string | null;
  groupNames: Set<string>;
}

/** The {@link UserFacts} of a user; no name and no group for a user who no longer exists. */
export async function userFacts(ctx: Context, userId: number): Promise<UserFacts> {
  let actor;
  try {
    actor = await actorOfUser(ctx.db, userId, ctx.now());
  } catch (e) {
    if (e instanceof Unauthorized) return { userName: null, groupNames: new Set() };
    throw e;
  }
  const groups = await groupNamesByIds(ctx.db, actor.groupIds);
  return { userName: actor.name.toLowerCase(), groupNames: new Set([...groups.values()].map((name) => name.toLowerCase())) };
}

/**
 * Whether a secret passes its limits in every subject: `authorizedBranches` (a pattern set, see
 * src/ci/patterns.ts) must match a branch of the subject, `authorization` (a job match, see
 * job-match.ts) must hold; an unlimited secret passes, except that a build of no branch needs
 * its commit on some branch (OneDev's default `on branch "**"`). A limit that no longer parses
 * withholds the secret.
 */
function authorizedIn(def: SecretDefinition, subjects: BranchSubject[], facts: Map<number, UserFacts>, projectPath: string): boolean {
  let branches: PatternSet | null = null;
  let match: JobMatch | null = null;
  try {
    if (def.authorizedBranches !== null) branches = parsePatternSet(def.authorizedBranches);
    if (def.authorization !== null) match = parseJobMatch(def.authorization);
  } catch {
    return false;
  }
  return subjects.every((subject) => {
    if (branches !== null && !subject.branches.some((b) => patternSetMatches(branches!, b))) return false;
    if (match !== null && !jobMatches(match, { projectPath, branches: subject.branches, ...facts.get(subject.userId)! })) return false;
    return !(subject.holdingCommit && branches === null && match === null && subject.branches.length === 0);
  });
}

/** The job secrets a build may see, and the log lines about the ones withheld from it. */
export interface BuildSecrets {
  /**
   * Secret values by name, decrypted: every secret authorized for the build, and `''` for each
   * withheld secret the job refers to (so `@secret:NAME@` expands to nothing). A name referred to
   * but defined nowhere is absent (the job fails with `Job secret not found`), except in builds
   * that get no secret at all, where every referred name is withheld without looking.
   */
  secrets: Record<string, string>;
  /** One line per withheld secret the job refers to: `Secret 'NAME' withheld: <reason>`. */
  withheld: string[];
}

/**
 * The job secrets of a build (docs/compatibility.md#gitloom-differs-untrusted-builds: "never given to builds of pull requests from forks
 * or from authors without write access; each secret may be limited to branches"): the secrets of
 * the build's project and its ancestors (nearest wins by name) that the build is authorized for,
 * as decided by its audience (see `audienceOf`) and each secret's `authorizedBranches` and
 * `authorization` (OneDev 8.6 `JobSecret`).
 *
 * OneDev fails a job that refers to a secret it may not see (`Job secret not authorized`);
 * here the job runs, the reference expands to an empty string and the log says why, so a
 * pull request from a fork still gets its build.
 *
 * @param build the build about to run.
 * @param referenced names of job secrets the job refers to (its `secretRefs`); the build's
 *   Secret-typed params that name a job secret are added here.
 * @param key the secret key (secret-encryption.ts).
 * @throws Error when a stored value does not decrypt with `key` (a server misconfiguration).
 */
export async function buildJobSecrets(ctx: Context, build: BuildRow, referenced: readonly string[], key: Buffer): Promise<BuildSecrets> {
  const project = await getProjectRow(ctx.db, build.projectId);
  const params = await ctx.db.selectFrom('buildParams').select('value').where('buildId', '=', build.id).where('type', '=', 'Secret').execute();
  const names = [
    ...new Set([...referenced, ...params.map((p) => p.value).filter((v): v is string => v !== null && !v.startsWith(SECRET_LITERAL_PREFIX))]),
  ].sort();
  const secrets: Record<string, string> = {};
  const withheld: string[] = [];
  const withhold = (name: string, reason: string) => {
    secrets[name] = '';
    withheld.push(`Secret '${name}' withheld: ${reason}`);
  };
  const audience = await audienceOf(ctx, build, project);
  if ('withheld' in audience) {
    for (const name of names) withhold(name, audience.withheld);
    return { secrets, withheld };
  }
  const defined = await hierarchySecrets(ctx, project.path);
  const facts = new Map<number, UserFacts>();
  for (const { userId } of audience.subjects) if (!facts.has(userId)) facts.set(userId, await userFacts(ctx, userId));
  for (const [name, def] of defined) {
    if (!hasValue(def.stored)) continue;
    if (authorizedIn(def, audience.subjects, facts, project.path)) secrets[name] = decryptedSecret(def.stored, key);
    else if (names.includes(name)) withhold(name, audience.denial);
  }
  return { secrets, withheld };
}
