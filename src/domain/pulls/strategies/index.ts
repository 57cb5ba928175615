/** The merge strategies by name (docs/compatibility.md#pull-requests-merge-strategies-and-preview): one file each. */
import type { MergeStrategy } from '../../../db/schema.js';
import { mergeCommit } from './merge-commit.js';
import { mergeCommitIfNecessary } from './merge-commit-if-necessary.js';
import { rebase } from './rebase.js';
import { squash } from './squash.js';
import type { Strategy } from './strategy.js';

export type { CleanPreview, MergeIdentities, Strategy } from './strategy.js';

/** The implementation of each strategy the API accepts. */
export const strategies: Record<MergeStrategy, Strategy> = {
  CREATE_MERGE_COMMIT: mergeCommit,
  CREATE_MERGE_COMMIT_IF_NECESSARY: mergeCommitIfNecessary,
  SQUASH_SOURCE_BRANCH_COMMITS: squash,
  REBASE_SOURCE_BRANCH_COMMITS: rebase,
};
