import type { Db } from '../../db/database.js';
import type { PullRequestRow } from '../../db/schema.js';
import { branchProtection, reviewRequirementItems } from '../projects/index.js';
import { userIdsByNames } from '../users/index.js';
import { groupMemberIds } from '../access/index.js';
import { autoWatch } from './changes.js';

/** A parsed review requirement: required users by login, and groups with how many members must review. */
export interface ReviewRequirement {
  users: string[];
  groups: { name: string; count: number }[];
}

/**
 * Parses a branch protection review requirement (OneDev's notation): space-separated
 * `user(<login>)` and `group(<name>)` items, each with an optional `:<count>` (for a group: how
 * many of its members must review, default 1); a bare word is a login.
 * @example parseReviewRequirement('user(alice) group(devs):2') → {users: ['alice'], groups: [{name: 'devs', count: 2}]}
 */
export function parseReviewRequirement(text: string | null | undefined): ReviewRequirement {
  const result: ReviewRequirement = { users: [], groups: [] };
  if (!text) return result;
  for (const item of reviewRequirementItems(text)) {
    const name = item.name.replace(/\\(.)/g, '$1').trim();
    if (!name) continue;
    if (item.kind?.toLowerCase() === 'group') result.groups.push({ name, count: item.count ? Number(item.count) : 1 });
    else result.users.push(name.toLowerCase());
  }
  return result;
}

/** Ids of the users the target branch's protection requires as reviewers of `pr` (never the submitter). */
export async function requiredReviewerIds(db: Db, pr: PullRequestRow): Promise<number[]> {
  const rule = await branchProtection({ db }, pr.targetProjectId, pr.targetBranch, pr.submitterId);
  const requirement = parseReviewRequirement(rule.reviewRequirements.join(' '));
  const ids = new Set<number>();
  for (const id of await userIdsByNames(db, requirement.users)) ids.add(id);
  for (const group of requirement.groups) {
    const members = await groupMemberIds(db, group.name, pr.submitterId);
    const reviewing = await db
      .selectFrom('pullRequestReviews')
      .select('userId')
      .where('requestId', '=', pr.id)
      .where('userId', 'in', members.length > 0 ? members : [0])
      .execute();
    const chosen = [...reviewing.map((r) => r.userId), ...members];
    for (const id of [...new Set(chosen)].slice(0, group.count)) ids.add(id);
  }
  ids.delete(pr.submitterId);
  return [...ids];
}

/**
 * After the source branch was updated (docs/compatibility.md#pull-requests-background-check step 4): reviews of required
 * reviewers go back to PENDING (EXCLUDED ones too) and missing required reviewers are added;
 * manually added reviewers keep their status. Runs inside the caller's transaction.
 */
export async function resetRequiredReviews(db: Db, pr: PullRequestRow, date: number): Promise<void> {
  const required = await requiredReviewerIds(db, pr);
  if (required.length === 0) return;
  await db
    .updateTable('pullRequestReviews')
    .set({ status: 'PENDING', statusDate: date })
    .where('requestId', '=', pr.id)
    .where('userId', 'in', required)
    .where('status', '<>', 'PENDING')
    .execute();
  await db
    .insertInto('pullRequestReviews')
    .values(required.map((userId) => ({ requestId: pr.id, userId, status: 'PENDING' as const, statusDate: date })))
    .onConflict((oc) => oc.columns(['requestId', 'userId']).doNothing())
    .execute();
  await autoWatch(db, pr.id, required);
}
