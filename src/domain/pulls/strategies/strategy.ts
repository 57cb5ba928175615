/**
 * What every merge strategy provides (docs/compatibility.md#pull-requests-merge-strategies-and-preview table; one file each, as Gitea's
 * merge_merge.go, merge_squash.go, merge_rebase.go): a preview, made without moving any ref, and
 * the final commit of a merge made from that preview.
 */
import type { CommitIdentityInput } from '../../../git/repository.js';
import type { MergePreview } from '../merge-preview.js';

/** Identities used when producing merge commits: preview commits use the system identity. */
export interface MergeIdentities {
  /** Author of merge and squash commits. */
  author: CommitIdentityInput;
  /** Committer of every produced commit. */
  committer: CommitIdentityInput;
  /** Author of the squash commit (the submitter). */
  squashAuthor: CommitIdentityInput;
}

/** A preview whose merge is clean. */
export type CleanPreview = MergePreview & { mergeCommitHash: string };

/** One merge strategy. */
export interface Strategy {
  /**
   * The commit the target branch would point to after merging `head` into `targetHead`, or null
   * when the merge conflicts. Creates objects only.
   */
  preview(repo: string, targetHead: string, head: string, message: string, who: MergeIdentities): Promise<string | null>;
  /**
   * The commit the target branch moves to when the request is merged: the preview re-made by the
   * merging user (`merger`) with the merge message, or reused where the strategy keeps commits.
   */
  finalize(repo: string, preview: CleanPreview, message: string, merger: CommitIdentityInput): Promise<string>;
}
