/** CREATE_MERGE_COMMIT (docs/compatibility.md#pull-requests-merge-strategies-and-preview): always a two-parent commit (target head, request head). */
import { commitTree, mergeTree } from '../../../git/repository.js';
import type { Strategy } from './strategy.js';

/** Merge commits by the merging user, with the preview's tree and parents. */
export const mergeCommit: Strategy = {
  async preview(repo, targetHead, head, message, who) {
    const merged = await mergeTree(repo, targetHead, head);
    if (!merged.clean) return null;
    return commitTree(repo, { tree: merged.tree, parents: [targetHead, head], message, author: who.author, committer: who.committer });
  },
  /** One `commit-tree`: the preview's tree and parents (target head, request head), by the merger. */
  async finalize(repo, preview, message, merger) {
    return commitTree(repo, {
      tree: `${preview.mergeCommitHash}^{tree}`,
      parents: [preview.targetHeadCommitHash, preview.headCommitHash],
      message,
      author: merger,
      committer: merger,
    });
  },
};
