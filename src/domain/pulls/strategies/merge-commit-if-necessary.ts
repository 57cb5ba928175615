/**
 * CREATE_MERGE_COMMIT_IF_NECESSARY (docs/compatibility.md#pull-requests-merge-strategies-and-preview): the request head itself (a
 * fast-forward) when the target head is its ancestor, else a merge commit.
 */
import { isAncestor } from '../../../git/repository.js';
import { mergeCommit } from './merge-commit.js';
import type { Strategy } from './strategy.js';

/** Fast-forward when possible, otherwise {@link mergeCommit}. */
export const mergeCommitIfNecessary: Strategy = {
  async preview(repo, targetHead, head, message, who) {
    if (await isAncestor(repo, targetHead, head)) return head;
    return mergeCommit.preview(repo, targetHead, head, message, who);
  },
  async finalize(repo, preview, message, merger) {
    if (preview.mergeCommitHash === preview.headCommitHash) return preview.headCommitHash;
    return mergeCommit.finalize(repo, preview, message, merger);
  },
};
