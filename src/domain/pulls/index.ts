/**
 * The door of the pulls area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { createAssignment, deleteAssignment, getAssignment, listAssignments } from './assignments.js';
export { buildStatusCondition, currentBuildsOf } from './builds.js';
export { changesRange, type ChangesRange, wholeLineRange } from './changes-views.js';
export { type PullRequestChangeData, recordPullRequestReferences } from './changes.js';
export { checkPullRequest, onRefsUpdated } from './check.js';
export { createComment, deleteComment, getComment, listComments, updateComment } from './comments.js';
export { type RegionChoice } from './conflict-regions.js';
export {
  type ConflictFile,
  type ConflictKind,
  type ConflictResolutionInput,
  type FileResolutionInput,
  pullRequestConflicts,
  type PullRequestConflicts,
  resolutionMessage,
  resolveConflicts,
} from './conflict-resolution.js';
export { fixedIssueIdsOfPullRequestReference, getPullRequestFixedIssueIds, listIssuePullRequests } from './fixed-issues.js';
export { listChanges } from './history.js';
export { createLabel, deleteLabel, listLabels } from './labels.js';
export {
  deletePullRequest,
  deleteSourceBranch,
  discardPullRequest,
  reopenPullRequest,
  restoreSourceBranch,
  setDescription,
  setMergeStrategy,
  setTitle,
} from './lifecycle.js';
export { getMergePreview } from './merge-preview.js';
export { defaultMergeMessage, mergePullRequest } from './merge.js';
export {
  type ActivityEntry,
  type BranchComparison,
  compareBranches,
  mergeBox,
  type MergeBoxView,
  type MergeStrategy,
  projectPaths,
  pullRequestActivity,
  pullRequestByNumber,
  type PullRequestRow,
  reviewOfUser,
  userIdByName,
  userNames,
} from './page-views.js';
export { userPullRequestLists } from './pull-request-lists.js';
export { queryPullRequests } from './pull-request-query.js';
export {
  findPullRequestAt,
  findPullRequestRow,
  getPullRequest,
  getPullRequestRow,
  getUpdates,
  latestUpdate,
  loadReadablePullRequest,
  openPullRequest,
  parseMergeStrategy,
  pullRefs,
  pullRequestNumbers,
  reassignPullRequestAuthors,
  setBuildCommit,
  touchCodeComments,
} from './pull-requests.js';
export { createReview, getReview, listReviews, updateReview } from './reviews.js';
export { onJournaledMergeApplied, onProjectsDeleting } from './transitions.js';
export { createWatch, deleteWatch, getWatch, listWatches, updateWatch } from './watches.js';
export { recordPullRequestMentions } from './pull-request-mentions.js';
export { assigneeIds, pendingReviewerIds, pullRequestWatcherIds } from './recipients.js';
export { pullRequestsWithLatestUpdate } from './latest-updates.js';
