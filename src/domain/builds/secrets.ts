/**
 * Job secrets (docs/compatibility.md#projects-settings `buildSetting.jobSecrets`): name/value pairs stored in a
 * project's setting and inherited from its ancestors by name (the nearest project wins).
 *
 * At rest each value is encrypted (src/domain/builds/secret-encryption.ts): the stored secret
 * carries `encryptedValue` instead of `value`. The API reads and writes plain `value`s as
 * before; only a running job receives the decrypted values, and only those it is authorized
 * for ({@link buildJobSecrets}, docs/compatibility.md#gitloom-differs-untrusted-builds).
 */
import { parsePatternSet, patternSetMatches, PatternSyntaxError, type PatternSet } from '../../ci/patterns.js';
import type { Db } from '../../db/database.js';
import type { BuildRow } from '../../db/schema.js';
import { BadRequest, Unauthorized } from '../../errors.js';
import { isAncestor } from '../../git/merge.js';
import { branchesContaining } from '../../git/files.js';
import { refHead } from '../../git/refs.js';
import { checkPatternLength, QuerySyntaxError, UserPatternError } from '../../query/index.js';
import { actorOfUser } from '../auth/authenticate.js';
import { withActor, type Context } from '../context.js';
import { ancestorPaths, projectPermissions } from '../projects/permissions.js';
import { jobMatches, namesIn, parseJobMatch, patternsIn, type JobMatch } from './job-match.js';
import { decryptSecret, encryptSecret, isEncryptedSecret } from './secret-encryption.js';

interface StoredSecret {
  name?: unknown;
  value?: unknown;
  encryptedValue?: unknown;
  authorizedBranches?: unknown;
  authorization?: unknown;
  archived?: unknown;
}

/** A Secret-typed param value that is the secret itself rather than a job secret's name (docs/compatibility.md#builds-json). */
const SECRET_LITERAL_PREFIX = '$OneDev-Secret-Literal$';

function secretsOf(setting: Record<string, unknown>): StoredSecret[] | null {
  const build = setting.buildSetting;
  if (typeof build !== 'object' || build === null) return null;
  const list = (build as { jobSecrets?: unknown }).jobSecrets;
  return Array.isArray(list) ? (list as StoredSecret[]) : null;
}

function withSecrets<T extends Record<string, unknown>>(setting: T, map: (s: StoredSecret) => StoredSecret): T {
  const list = secretsOf(setting);
  if (!list) return setting;
  const jobSecrets = list.map((s) => (typeof s === 'object' && s !== null && !Array.isArray(s) ? map(s) : s));
  return { ...setting, buildSetting: { ...(setting.buildSetting as object), jobSecrets } };
}

/**
 * The stored form of a setting given through the API: each job secret's string `value` is
 * replaced by its `encryptedValue`; an `encryptedValue` sent by a client is dropped.
 */
export function sealJobSecrets<T extends Record<string, unknown>>(setting: T, key: Buffer): T {
  return withSecrets(setting, ({ value, encryptedValue: _client, ...rest }) =>
    typeof value === 'string' ? { ...rest, encryptedValue: encryptSecret(key, value) } : { ...rest, ...(value !== undefined && { value }) },
  );
}

/** The API form of a stored setting: each `encryptedValue` decrypted back into `value`. */
export function revealJobSecrets<T extends Record<string, unknown>>(setting: T, key: Buffer): T {
  return withSecrets(setting, ({ encryptedValue, ...rest }) =>
    isEncryptedSecret(encryptedValue) ? { ...rest, value: decryptSecret(key, encryptedValue) } : rest,
  );
}

/** Whether a stored setting still holds a job secret value in plain text. */
function hasPlaintextSecret(setting: Record<string, unknown>): boolean {
  return (secretsOf(setting) ?? []).some((s) => typeof s === 'object' && s !== null && typeof s.value === 'string');
}

/**
 * Start-up step: encrypts the job secrets stored in plain text (by versions before encryption
 * at rest). Each project row is rewritten only if it did not change meanwhile (compare-and-set
 * on the setting text), so concurrent processes and requests never lose an update. Returns the
 * number of projects rewritten.
 */
export async function encryptPlaintextJobSecrets(db: Db, key: Buffer): Promise<number> {
  const rows = await db.selectFrom('projects').select(['id', 'setting']).where('setting', 'like', '%jobSecrets%').execute();
  let rewritten = 0;
  for (const row of rows) {
    if (!row.setting) continue;
    const setting = JSON.parse(row.setting) as Record<string, unknown>;
    if (!hasPlaintextSecret(setting)) continue;
    const done = await db
      .updateTable('projects')
      .set({ setting: JSON.stringify(sealJobSecrets(setting, key)) })
      .where('id', '=', row.id)
      .where('setting', '=', row.setting)
      .executeTakeFirst();
    rewritten += Number(done.numUpdatedRows);
  }
  return rewritten;
}

/** A secret's definition in force for a project: the nearest non-archived one of its name. */
interface SecretDefinition {
  stored: StoredSecret;
  authorizedBranches: string | null;
  authorization: string | null;
}

const blankToNull = (text: unknown): string | null => (typeof text === 'string' && text.trim() !== '' ? text : null);

/** The job secrets of a project and its ancestors by name, the nearest project winning; archived ones left out. */
async function hierarchySecrets(ctx: Context, projectPath: string): Promise<Map<string, SecretDefinition>> {
  const rows = await ctx.db.selectFrom('projects').select(['path', 'setting']).where('path', 'in', ancestorPaths(projectPath)).execute();
  rows.sort((a, b) => a.path.length - b.path.length);
  const result = new Map<string, SecretDefinition>();
  for (const row of rows) {
    if (!row.setting) continue;
    let secrets: StoredSecret[];
    try {
      secrets = secretsOf(JSON.parse(row.setting) as Record<string, unknown>) ?? [];
    } catch {
      continue;
    }
    for (const s of secrets) {
      if (typeof s !== 'object' || s === null || typeof s.name !== 'string' || s.archived === true) continue;
      result.set(s.name, { stored: s, authorizedBranches: blankToNull(s.authorizedBranches), authorization: blankToNull(s.authorization) });
    }
  }
  return result;
}

/** Whether a stored secret has a value (encrypted, or plain from before encryption at rest). */
const hasValue = (s: StoredSecret): boolean => isEncryptedSecret(s.encryptedValue) || typeof s.value === 'string';

/** A stored secret's value, decrypted (see {@link hasValue}). */
function decrypted(s: StoredSecret, key: Buffer): string {
  return isEncryptedSecret(s.encryptedValue) ? decryptSecret(key, s.encryptedValue) : String(s.value);
}

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
    const pr = await ctx.db
      .selectFrom('pullRequests')
      .select(['submitterId', 'sourceProjectId', 'sourceBranch', 'targetBranch'])
      .where('id', '=', build.requestId)
      .executeTakeFirst();
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
interface UserFacts {
  userName: string | null;
  groupNames: Set<string>;
}

async function userFacts(ctx: Context, userId: number): Promise<UserFacts> {
  let actor;
  try {
    actor = await actorOfUser(ctx.db, userId, ctx.now());
  } catch (e) {
    if (e instanceof Unauthorized) return { userName: null, groupNames: new Set() };
    throw e;
  }
  const groups = actor.groupIds.length === 0 ? [] : await ctx.db.selectFrom('groups').select('name').where('id', 'in', actor.groupIds).execute();
  return { userName: actor.name.toLowerCase(), groupNames: new Set(groups.map((g) => g.name.toLowerCase())) };
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
  const project = await ctx.db.selectFrom('projects').select(['id', 'path']).where('id', '=', build.projectId).executeTakeFirstOrThrow();
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
    if (authorizedIn(def, audience.subjects, facts, project.path)) secrets[name] = decrypted(def.stored, key);
    else if (names.includes(name)) withhold(name, audience.denial);
  }
  return { secrets, withheld };
}

/**
 * Checks the job secrets of a setting about to be stored (docs/compatibility.md#projects-settings
 * `buildSetting.jobSecrets`): each must be an object; `authorizedBranches` null or a pattern
 * set (space-separated path wildcards, `-` excludes, src/ci/patterns.ts); `authorization` null or
 * a job match (job-match.ts) whose users and groups exist and whose branch and project
 * wildcards are at most 1,000 characters (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 *
 * @throws BadRequest naming the secret and field, e.g.
 *   `buildSetting.jobSecrets[0].authorizedBranches: Malformed pattern set: unterminated quote in '"main'`.
 */
export async function validateJobSecrets(db: Db, setting: Record<string, unknown>): Promise<void> {
  const build = setting.buildSetting;
  if (build === undefined || build === null) return;
  if (typeof build !== 'object' || Array.isArray(build)) throw new BadRequest('buildSetting must be an object');
  const list = (build as { jobSecrets?: unknown }).jobSecrets;
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw new BadRequest('buildSetting.jobSecrets must be an array');
  for (const [i, item] of list.entries()) {
    const where = `buildSetting.jobSecrets[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new BadRequest(`${where} must be an object`);
    const { authorizedBranches, authorization } = item as StoredSecret;
    for (const [field, text] of [
      ['authorizedBranches', authorizedBranches],
      ['authorization', authorization],
    ] as const) {
      if (text !== undefined && text !== null && typeof text !== 'string') throw new BadRequest(`${where}.${field} must be a string or null`);
    }
    if (typeof authorizedBranches === 'string') {
      try {
        parsePatternSet(authorizedBranches);
      } catch (e) {
        if (!(e instanceof PatternSyntaxError)) throw e;
        throw new BadRequest(`${where}.authorizedBranches: ${e.message}`);
      }
    }
    if (typeof authorization === 'string' && authorization.trim() !== '') {
      let match: JobMatch;
      try {
        match = parseJobMatch(authorization);
      } catch (e) {
        if (!(e instanceof QuerySyntaxError)) throw e;
        throw new BadRequest(`${where}.authorization: ${e.message}`);
      }
      for (const pattern of patternsIn(match)) {
        try {
          checkPatternLength(pattern);
        } catch (e) {
          if (!(e instanceof UserPatternError)) throw e;
          throw new BadRequest(`${where}.authorization: ${e.message}`);
        }
      }
      const { users, groups } = namesIn(match);
      for (const name of users) {
        const found = await db
          .selectFrom('users')
          .select('id')
          .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
          .where('id', '>', 0)
          .executeTakeFirst();
        if (!found) throw new BadRequest(`${where}.authorization: Unable to find user with login: ${name}`);
      }
      for (const name of groups) {
        const found = await db
          .selectFrom('groups')
          .select('id')
          .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
          .executeTakeFirst();
        if (!found) throw new BadRequest(`${where}.authorization: Unable to find group: ${name}`);
      }
    }
  }
}
