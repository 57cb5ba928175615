/**
 * SQUASH_SOURCE_BRANCH_COMMITS (docs/compatibility.md#pull-requests-merge-strategies-and-preview): one commit on the target head with the
 * merged tree, authored by the submitter.
 */
import { commitTree, mergeTree, readCommit } from '../../../git/repository.js';
import type { Strategy } from './strategy.js';

/** One squashed commit; the final one keeps the preview's author (the submitter). */
export const squash: Strategy = {
  async preview(repo, targetHead, head, message, who) {
    const merged = await mergeTree(repo, targetHead, head);
    if (!merged.clean) return null;
    return commitTree(repo, { tree: merged.tree, parents: [targetHead], message, author: who.squashAuthor, committer: who.committer });
  },
  async finalize(repo, preview, message, merger) {
    const squashed = await readCommit(repo, preview.mergeCommitHash);
    return commitTree(repo, { tree: squashed.tree, parents: squashed.parents, message, author: squashed.author, committer: merger });
  },
};
