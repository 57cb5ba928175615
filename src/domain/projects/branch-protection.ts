import type { Db } from '../../db/database.js';
import { matchesPatterns } from '../../ci/patterns.js';
import { changedFiles, hasCommitSignature } from '../../git/history.js';
import { isFastForward, quarantineEnv, type PushedRef } from '../../git/hooks.js';
import { ZERO_HASH } from '../../git/names.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { getProjectRow } from './projects.js';
import { settingOf, type BranchProtection, type TagProtection } from './settings.js';
import { ancestorSettings } from './ancestor-settings.js';
import { getSecuritySetting } from '../settings/index.js';
import { checkCommitMessages, commitMessageRuleOf, type CommitMessageRule } from './commit-messages.js';
import { userMatchTokens } from './principal-expressions.js';
import { hasPullMirror, PULL_MIRROR_REFUSAL } from './pull-mirror-guard.js';
import { userNamesByIds } from '../users/index.js';
import { groupNamesByIds, groupNamesOfUser } from '../access/index.js';

/** A file protection of a branch protection (docs/compatibility.md#projects-branch-protection `fileProtections`). */
export interface FileProtection {
  /** Space-separated path patterns (`-` prefix excludes). */
  paths: string;
  /** Reviewers required for changes of these paths (null = none). */
  reviewRequirement: string | null;
  /** Jobs that must succeed for changes of these paths. */
  jobNames: string[];
}

/** The effective protection of one branch for one user: the union of every matching rule. */
export interface EffectiveBranchProtection {
  /** Whether any enabled rule matched. */
  protected: boolean;
  preventForcedPush: boolean;
  preventDeletion: boolean;
  preventCreation: boolean;
  commitSignatureRequired: boolean;
  /** Review requirements of the matching rules (reviewer expressions, e.g. `user(alice):2`). */
  reviewRequirements: string[];
  /** Jobs that must succeed before a change reaches the branch. */
  requiredJobNames: string[];
  /** The commit message rules of the matching rules (each must hold); see commit-messages.ts. */
  commitMessageRules: CommitMessageRule[];
  /** The file protections of the matching rules. */
  fileProtections: FileProtection[];
}

/** The effective protection of one tag for one user. */
export interface EffectiveTagProtection {
  protected: boolean;
  preventUpdate: boolean;
  preventDeletion: boolean;
  preventCreation: boolean;
}

interface Who {
  userId: number;
  name: string | null;
  groups: Set<string>;
}

async function who(db: Db, userId: number): Promise<Who> {
  if (userId === ANONYMOUS_ID) return { userId, name: null, groups: new Set() };
  const [users, groups, security] = await Promise.all([userNamesByIds(db, [userId]), groupNamesOfUser(db, userId), getSecuritySetting({ db })]);
  const names = new Set(groups.map((name) => name.toLowerCase()));
  if (security.defaultLoginGroupId !== null) {
    const group = (await groupNamesByIds(db, [security.defaultLoginGroupId])).get(security.defaultLoginGroupId);
    if (group !== undefined) names.add(group.toLowerCase());
  }
  return { userId, name: users.get(userId) ?? null, groups: names };
}

function criterionMatches(token: string, user: Who): boolean {
  if (token.toLowerCase() === 'anyone') return true;
  const m = /^(user|group)\((.*)\)$/i.exec(token);
  if (!m) return false;
  const name = m[2].replace(/\\(.)/g, '$1').toLowerCase();
  return m[1].toLowerCase() === 'user' ? user.name === name : user.groups.has(name);
}

/**
 * Evaluates a OneDev user-match expression (`anyone`, `user(name)`, `group(name)`, several
 * separated by spaces, then optional `except` criteria): true when an inclusion matches and no
 * exclusion does. An empty expression means anyone.
 */
export function userMatches(expression: string | null | undefined, user: Who): boolean {
  const parts = userMatchTokens(expression ?? '');
  if (parts.length === 0) return true;
  const except = parts.findIndex((t) => t.toLowerCase() === 'except');
  const includes = except < 0 ? parts : parts.slice(0, except);
  const excludes = except < 0 ? [] : parts.slice(except + 1);
  return includes.some((t) => criterionMatches(t, user)) && !excludes.some((t) => criterionMatches(t, user));
}

function safeMatch(patterns: string, value: string): boolean {
  try {
    return matchesPatterns(patterns, value);
  } catch {
    return false;
  }
}

/** Branch and tag protections of a project followed by those of its ancestors (docs/compatibility.md#projects-settings). */
async function hierarchyProtections(db: Db, projectId: number): Promise<{ branches: BranchProtection[]; tags: TagProtection[] }> {
  const project = await getProjectRow(db, projectId);
  const settings = (await ancestorSettings(db, project.path)).reverse().map(settingOf);
  return { branches: settings.flatMap((s) => s.branchProtections), tags: settings.flatMap((s) => s.tagProtections) };
}

function foldBranch(rules: BranchProtection[], branch: string, user: Who): EffectiveBranchProtection {
  const result: EffectiveBranchProtection = {
    protected: false,
    preventForcedPush: false,
    preventDeletion: false,
    preventCreation: false,
    commitSignatureRequired: false,
    reviewRequirements: [],
    requiredJobNames: [],
    commitMessageRules: [],
    fileProtections: [],
  };
  for (const rule of rules) {
    if (!rule.enabled || !safeMatch(rule.branches, branch) || !userMatches(rule.userMatch, user)) continue;
    result.protected = true;
    result.preventForcedPush ||= rule.preventForcedPush;
    result.preventDeletion ||= rule.preventDeletion;
    result.preventCreation ||= rule.preventCreation;
    result.commitSignatureRequired ||= rule.commitSignatureRequired;
    if (rule.reviewRequirement && rule.reviewRequirement.trim()) result.reviewRequirements.push(rule.reviewRequirement.trim());
    for (const job of rule.jobNames ?? []) if (!result.requiredJobNames.includes(job)) result.requiredJobNames.push(job);
    const messages = commitMessageRuleOf(rule);
    if (messages) result.commitMessageRules.push(messages);
    result.fileProtections.push(...fileProtectionsOf(rule.fileProtections));
  }
  return result;
}

/** The well-formed file protections of a stored rule (items of a wrong shape are skipped). */
function fileProtectionsOf(stored: unknown): FileProtection[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const { paths, reviewRequirement, jobNames } = item as Record<string, unknown>;
    if (typeof paths !== 'string' || paths.trim() === '') return [];
    return [
      {
        paths,
        reviewRequirement: typeof reviewRequirement === 'string' && reviewRequirement.trim() !== '' ? reviewRequirement.trim() : null,
        jobNames: Array.isArray(jobNames) ? jobNames.filter((j): j is string => typeof j === 'string') : [],
      },
    ];
  });
}

/** What the file protections demand of a change touching `files`: reviews, jobs. */
function fileDemands(protections: readonly FileProtection[], files: readonly string[]): { review: boolean; jobs: boolean } {
  const demands = { review: false, jobs: false };
  for (const protection of protections) {
    if (!files.some((file) => safeMatch(protection.paths, file))) continue;
    demands.review ||= protection.reviewRequirement !== null;
    demands.jobs ||= protection.jobNames.length > 0;
  }
  return demands;
}

function foldTag(rules: TagProtection[], tag: string, user: Who): EffectiveTagProtection {
  const result: EffectiveTagProtection = { protected: false, preventUpdate: false, preventDeletion: false, preventCreation: false };
  for (const rule of rules) {
    if (!rule.enabled || !safeMatch(rule.tags, tag) || !userMatches(rule.userMatch, user)) continue;
    result.protected = true;
    result.preventUpdate ||= rule.preventUpdate;
    result.preventDeletion ||= rule.preventDeletion;
    result.preventCreation ||= rule.preventCreation;
  }
  return result;
}

/**
 * The effective branch protection for `userId` pushing or merging to `branch` of a project: every
 * enabled rule of the project and its ancestors whose `branches` patterns match the branch and
 * whose `userMatch` matches the user, folded together (docs/compatibility.md#projects-branch-protection).
 * Used by pushes and by pull requests (required reviewers and jobs).
 *
 * @throws NotFound for an unknown project.
 */
export async function branchProtection(ctx: Pick<Context, 'db'>, projectId: number, branch: string, userId: number): Promise<EffectiveBranchProtection> {
  const [{ branches }, user] = await Promise.all([hierarchyProtections(ctx.db, projectId), who(ctx.db, userId)]);
  return foldBranch(branches, branch, user);
}

/**
 * Decides a push (the pre-receive check): returns one message per refused ref update, empty when
 * everything may land. Branches, in OneDev's order (docs/compatibility.md#projects-branch-protection):
 * - creation: refused by `preventCreation`, or when a signature is required and the head commit
 *   carries none;
 * - deletion: refused by `preventDeletion`;
 * - update: refused when forced (not a fast-forward) under `preventForcedPush`, when a signature
 *   is required and the new head commit carries none, when the rule requires reviewers or a
 *   file protection matching a changed path (`git diff-tree` old..new) requires reviewers;
 * - then (creation and update) the commit message rules over the pushed commits (for a new
 *   branch its head commit only): `Error validating commit message of <hash>: <violation>`;
 * - then (update) required jobs of the rule or of a file protection matching a changed path:
 *   direct pushes are refused, a pull request is the way in.
 * Signatures: Gitloom stores no GPG keys, so it cannot verify one; where a signature is
 * required, a head commit without any signature is refused and a signed one is let through
 * (its signature checked for presence only). Merges of pull requests into such branches are
 * refused altogether (checkMerge: `No valid signature for head commit`), since the server's
 * own commits are never signed.
 * Tags: creation, deletion, update as their protection says. Any other ref — creation, update
 * or deletion — is refused with {@link SERVER_REF_REFUSAL} (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input: users write only
 * branches and tags). One refused update refuses the whole push: the pre-receive hook exits
 * non-zero and git rejects every ref of it (`! [remote rejected] … (pre-receive hook
 * declined)`), so nothing moves. `quarantine` lets git see the pushed objects still in
 * quarantine. A pull-mirrored project refuses every push with one message
 * ({@link PULL_MIRROR_REFUSAL}, docs/compatibility.md#repository-mirrors).
 */
export async function checkPush(
  ctx: Pick<Context, 'db' | 'repoPath'>,
  projectId: number,
  userId: number,
  updates: PushedRef[],
  quarantine: Record<string, unknown>,
): Promise<string[]> {
  if (updates.length > 0 && (await hasPullMirror.ask(ctx.db, projectId))) return [PULL_MIRROR_REFUSAL];
  const [{ branches, tags }, user] = await Promise.all([hierarchyProtections(ctx.db, projectId), who(ctx.db, userId)]);
  const repo = ctx.repoPath(projectId);
  const env = quarantineEnv(repo, quarantine);
  const errors: string[] = [];
  for (const update of updates) {
    const creation = update.oldHash === ZERO_HASH;
    const deletion = update.newHash === ZERO_HASH;
    if (update.ref.startsWith('refs/heads/')) {
      const rule = foldBranch(branches, update.ref.slice('refs/heads/'.length), user);
      if (!rule.protected) continue;
      const error = await branchUpdateError(repo, env, rule, update, creation, deletion);
      if (error !== null) errors.push(`${update.ref}: ${error}`);
    } else if (update.ref.startsWith('refs/tags/')) {
      const rule = foldTag(tags, update.ref.slice('refs/tags/'.length), user);
      if (!rule.protected) continue;
      if (creation && rule.preventCreation) errors.push(`${update.ref}: Can not create this tag`);
      else if (deletion && rule.preventDeletion) errors.push(`${update.ref}: Can not delete this tag`);
      else if (!creation && !deletion && rule.preventUpdate) errors.push(`${update.ref}: Can not update this tag`);
    } else {
      errors.push(`${update.ref}: ${SERVER_REF_REFUSAL}`);
    }
  }
  return errors;
}

/**
 * Why a push may not touch a ref outside `refs/heads/*` and `refs/tags/*` (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): the
 * other namespaces — `refs/pulls/N/*`, `refs/updates/<id>`, `refs/pulls-staging/*`, and any name
 * a user might invent — belong to the server, which writes them itself, never through
 * receive-pack.
 */
export const SERVER_REF_REFUSAL = 'Only branches (refs/heads/*) and tags (refs/tags/*) may be pushed; other refs are managed by the server';

/** The reason a protected branch refuses one update, or null (see {@link checkPush}). */
async function branchUpdateError(
  repo: string,
  env: Record<string, string>,
  rule: EffectiveBranchProtection,
  update: PushedRef,
  creation: boolean,
  deletion: boolean,
): Promise<string | null> {
  if (deletion) return rule.preventDeletion ? 'Can not delete this branch' : null;
  const unsigned = async () => rule.commitSignatureRequired && !(await hasCommitSignature(repo, update.newHash, env));
  let files: string[] | null = null;
  const demands = async () => {
    if (rule.fileProtections.length === 0 || creation) return { review: false, jobs: false };
    files ??= await changedFiles(repo, update.oldHash, update.newHash, env);
    return fileDemands(rule.fileProtections, files);
  };
  if (creation) {
    if (rule.preventCreation) return 'Can not create this branch';
    if (await unsigned()) return 'Can not create this branch as branch protection setting requires valid signature on head commit';
  } else {
    if (rule.preventForcedPush && !(await isFastForward(repo, update.oldHash, update.newHash, env))) return 'Can not force-push to this branch';
    if (await unsigned()) return 'Can not push to this branch as branch protection rule requires valid signature for head commit';
    if (rule.reviewRequirements.length > 0 || (await demands()).review) {
      return 'Review required for this change. Please submit pull request instead';
    }
  }
  const messageError = await checkCommitMessages(repo, rule.commitMessageRules, creation ? null : update.oldHash, update.newHash, env);
  if (messageError !== null) return messageError;
  if (!creation && (rule.requiredJobNames.length > 0 || (await demands()).jobs)) {
    return 'Build required for this change. Please submit pull request instead';
  }
  return null;
}
