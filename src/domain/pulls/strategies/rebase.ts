/**
 * REBASE_SOURCE_BRANCH_COMMITS (docs/compatibility.md#pull-requests-merge-strategies-and-preview): the request's non-merge commits replayed
 * on the target head, parents before children whatever the commit dates (as `git rebase`).
 */
import { commitTree, readCommits, rebaseCommits, revList } from '../../../git/repository.js';
import type { Strategy } from './strategy.js';

/** Replayed commits; the final ones re-made with the merging user as committer. */
export const rebase: Strategy = {
  async preview(repo, targetHead, head, _message, who) {
    const commits = await revList(repo, [head], [targetHead], { reverse: true, topoOrder: true });
    return rebaseCommits(repo, { onto: targetHead, commits, committer: who.committer });
  },
  /**
   * The preview's rebased commits re-created with the merging user as committer (same trees,
   * authors and messages, one `commit-tree` each, no new merges); the request's own commits the
   * preview reused unchanged at its start (a fast-forward prefix) stay as they are.
   */
  async finalize(repo, preview, _message, merger) {
    const [chain, own] = await Promise.all([
      revList(repo, [preview.mergeCommitHash], [preview.targetHeadCommitHash], { reverse: true, firstParent: true }),
      revList(repo, [preview.headCommitHash], [preview.targetHeadCommitHash]),
    ]);
    const original = new Set(own);
    let head = preview.targetHeadCommitHash;
    let rewriting = false;
    for (const commit of await readCommits(repo, chain)) {
      if (!rewriting && original.has(commit.hash) && commit.parents[0] === head) {
        head = commit.hash;
        continue;
      }
      rewriting = true;
      head = await commitTree(repo, {
        tree: commit.tree,
        parents: [head],
        message: commit.message,
        author: { name: commit.author.name, email: commit.author.email, date: commit.author.date, tzOffset: commit.author.tzOffset },
        committer: merger,
      });
    }
    return head;
  },
};
