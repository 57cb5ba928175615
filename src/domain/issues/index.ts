/**
 * The door of the issues area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  createIssueComment,
  createIssueVote,
  createIssueWatch,
  deleteIssueComment,
  deleteIssueVote,
  deleteIssueWatch,
  getIssueComment,
  getIssueVote,
  getIssueWatch,
  listUserIssueVotes,
  listUserIssueWatches,
  updateIssueComment,
  updateIssueWatch,
} from './conversation.js';
export { type FixReference, issuesAtPlaces, type NumberInProject, parseFixReferences, resolveFixPlaces, rowsAtPlaces } from './fix-references.js';
export { fixedIssueIdsBetween, onFixingCommitsPushed } from './fixed-issues.js';
export { buildByReference, issuesFixedInBuild, issuesFixedInPullRequest, pullRequestsFixingIssue } from './fixing-work.js';
export { issueActivity, issueByNumber, issueListNames } from './issue-page.js';
export { parseIssueQuery, queryIssues } from './issue-query.js';
export { ISSUE_FIELDS, ISSUE_STATES, stateOrdinal } from './issue-setting.js';
export {
  countIssuesScheduledOn,
  deleteIssue,
  findIssueAt,
  fixingCommitsOfIssue,
  getIssue,
  listIssueChanges,
  listIssueComments,
  listIssueCommits,
  listIssueFields,
  listIssueMilestones,
  listIssueVotes,
  listIssueWatches,
  loadAccessibleIssue,
  openIssue,
  reassignIssueAuthors,
  setIssueConfidential,
  setIssueDescription,
  setIssueFields,
  setIssueMilestones,
  setIssueTitle,
  transitIssueState,
} from './issues.js';
export { kindOf, parseReferences, recordReferences, scanReferences } from './references.js';
export { codeCommentProjects, pullRequestNumbers, recordPullRequestReferences } from './referencing-work.js';
export { findIssueRow, issueWatcherIds } from './issue-rows.js';
