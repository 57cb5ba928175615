import type { Db } from '../../db/database.js';
import { matchesPatterns } from '../../ci/patterns.js';
import { isFastForward, quarantineEnv, type PushedRef } from '../../git/hooks.js';
import { ZERO_HASH } from '../../git/names.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { getProjectRow } from './projects.js';
import { settingOf, type BranchProtection, type TagProtection } from './settings.js';
import { ancestorPaths } from '../permissions.js';
import { getSecuritySetting } from '../settings/settings.js';

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
  const [user, groups, security] = await Promise.all([
    db.selectFrom('users').select('name').where('id', '=', userId).executeTakeFirst(),
    db.selectFrom('memberships').innerJoin('groups', 'groups.id', 'memberships.groupId').select('groups.name').where('memberships.userId', '=', userId).execute(),
    getSecuritySetting({ db }),
  ]);
  const names = new Set(groups.map((g) => g.name.toLowerCase()));
  if (security.defaultLoginGroupId !== null) {
    const group = await db.selectFrom('groups').select('name').where('id', '=', security.defaultLoginGroupId).executeTakeFirst();
    if (group) names.add(group.name.toLowerCase());
  }
  return { userId, name: user?.name ?? null, groups: names };
}

function tokens(expression: string): string[] {
  return expression.match(/[^\s()]+(?:\((?:\\.|[^)\\])*\))?/g) ?? [];
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
  const parts = tokens(expression ?? '');
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

/** Branch and tag protections of a project followed by those of its ancestors (reference/projects.md §3). */
async function hierarchyProtections(db: Db, projectId: number): Promise<{ branches: BranchProtection[]; tags: TagProtection[] }> {
  const project = await getProjectRow(db, projectId);
  const rows = await db.selectFrom('projects').select(['path', 'setting', 'serviceDeskName']).where('path', 'in', ancestorPaths(project.path)).execute();
  rows.sort((a, b) => b.path.length - a.path.length);
  const settings = rows.map(settingOf);
  return { branches: settings.flatMap((s) => s.branchProtections), tags: settings.flatMap((s) => s.tagProtections) };
}

function foldBranch(rules: BranchProtection[], branch: string, user: Who): EffectiveBranchProtection {
  const result: EffectiveBranchProtection = {
    protected: false, preventForcedPush: false, preventDeletion: false, preventCreation: false, commitSignatureRequired: false,
    reviewRequirements: [], requiredJobNames: [],
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
  }
  return result;
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
 * whose `userMatch` matches the user, folded together (reference/projects.md §3 BranchProtection).
 * Used by pushes and by pull requests (required reviewers and jobs).
 *
 * @throws NotFound for an unknown project.
 */
export async function branchProtection(ctx: Pick<Context, 'db'>, projectId: number, branch: string, userId: number): Promise<EffectiveBranchProtection> {
  const [{ branches }, user] = await Promise.all([hierarchyProtections(ctx.db, projectId), who(ctx.db, userId)]);
  return foldBranch(branches, branch, user);
}

/** The effective tag protection for `userId` on `tag` of a project (reference/projects.md §3 TagProtection). */
export async function tagProtection(ctx: Pick<Context, 'db'>, projectId: number, tag: string, userId: number): Promise<EffectiveTagProtection> {
  const [{ tags }, user] = await Promise.all([hierarchyProtections(ctx.db, projectId), who(ctx.db, userId)]);
  return foldTag(tags, tag, user);
}

/**
 * Decides a push (the pre-receive check): returns one message per refused ref update, empty when
 * everything may land. Branches: creation, deletion, forced (non-fast-forward) update, and direct
 * updates of branches that require reviews or builds are refused as their protection says; tags:
 * creation, deletion, update. `quarantine` lets git see the pushed objects still in quarantine.
 */
export async function checkPush(
  ctx: Pick<Context, 'db' | 'repoPath'>,
  projectId: number,
  userId: number,
  updates: PushedRef[],
  quarantine: Record<string, unknown>,
): Promise<string[]> {
  const [{ branches, tags }, user] = await Promise.all([hierarchyProtections(ctx.db, projectId), who(ctx.db, userId)]);
  const repo = ctx.repoPath(projectId);
  const env = quarantineEnv(repo, quarantine);
  const errors: string[] = [];
  for (const update of updates) {
    const creation = update.oldHash === ZERO_HASH;
    const deletion = update.newHash === ZERO_HASH;
    if (update.ref.startsWith('refs/heads/')) {
      const name = update.ref.slice('refs/heads/'.length);
      const rule = foldBranch(branches, name, user);
      if (!rule.protected) continue;
      if (creation && rule.preventCreation) errors.push(`${update.ref}: Can not create this branch`);
      else if (deletion && rule.preventDeletion) errors.push(`${update.ref}: Can not delete this branch`);
      else if (!creation && !deletion) {
        if (rule.preventForcedPush && !(await isFastForward(repo, update.oldHash, update.newHash, env))) {
          errors.push(`${update.ref}: Can not force-push to this branch`);
        } else if (rule.reviewRequirements.length > 0) {
          errors.push(`${update.ref}: Review required for this change. Please submit pull request instead`);
        } else if (rule.requiredJobNames.length > 0) {
          errors.push(`${update.ref}: Build required for this change. Please submit pull request instead`);
        }
      }
    } else if (update.ref.startsWith('refs/tags/')) {
      const rule = foldTag(tags, update.ref.slice('refs/tags/'.length), user);
      if (!rule.protected) continue;
      if (creation && rule.preventCreation) errors.push(`${update.ref}: Can not create this tag`);
      else if (deletion && rule.preventDeletion) errors.push(`${update.ref}: Can not delete this tag`);
      else if (!creation && !deletion && rule.preventUpdate) errors.push(`${update.ref}: Can not update this tag`);
    } else if (!update.ref.startsWith('refs/')) {
      errors.push(`${update.ref}: Invalid ref name`);
    } else if (update.ref.startsWith('refs/pulls/')) {
      errors.push(`${update.ref}: Pull request refs are managed by the server`);
    }
  }
  return errors;
}
