/**
 * The door of the repositories area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  type Blame,
  blameAt,
  type TreeEntry,
  branchSummaries,
  browseAt,
  type BrowseResult,
  type Commit,
  commitLog,
  compareRevisions,
  lineCount,
  MAX_COMPARE_COMMITS,
  MAX_VIEW_BYTES,
  MAX_VIEW_LINES,
  projectByPath,
  rawFileAt,
  type RefSummary,
  repositoryOverview,
  revisionNames,
  tagSummaries,
} from './browse.js';
export { onArchivesProjectsDeleting } from './archive-cache.js';
export { type Archive, archiveAt } from './archives.js';
export { buildCommit, queryCommits } from './commit-query.js';
export { getCommit } from './commits.js';
export { getRepositoryDefaultBranch, setRepositoryDefaultBranch } from './default-branch.js';
export { type LastCommit, lastCommitsAt } from './last-commits.js';
export { commitGraph, type GraphLine, type GraphRow } from './commit-graph.js';
export { MAX_FINDER_PATHS, revisionPaths, type RevisionPaths } from './paths.js';
export { type CommitDiff, diffBlobTexts, diffCommits, type DiffHunk, type DiffLine, type FileDiff, MAX_DIFF_BLOB_BYTES } from './diff.js';
export { branchPathAt, commitFile, commitFiles, type FilesCommitRequest, type FileWrite, listDirectoryAt, MAX_FILE_CONTENT, readFile } from './files.js';
export { type AuthorizedRepository, type GitAccess, prepareGitAccess, type PreReceiveReport, type PushReport } from './git-access.js';
export {
  advertiseRefs,
  checkGitProjectPath,
  type GitProtocolResponse,
  type GitService,
  gitProjectPath,
  gitServiceAccess,
  serveGitSession,
  serviceRpc,
} from './git-protocol.js';
export { highlighter, languageOf } from './languages.js';
export { HOOK_SECRET_HEADER, HOOKS_PATH } from './push-hooks.js';
export { moveRef, type RefMove } from './ref-updates.js';
export { createBranch, createTag, deleteBranch, deleteTag, getBranch, getTag, listBranchNames, listTagNames } from './refs.js';
export { trimSlashes } from './revisions.js';
export { MaintenanceWorker, type MaintenanceWorkerOptions, markMaintenanceDue } from './maintenance-worker.js';
