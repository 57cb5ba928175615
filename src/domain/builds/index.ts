/**
 * The door of the builds area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { downloadArtifact, getArtifactInfo, removeArtifact, uploadArtifact } from './artifacts.js';
export {
  branchCommit,
  buildByNumber,
  type BuildDetails,
  buildLogTail,
  buildProjectPaths,
  listArtifactFiles,
  type RunnableJob,
  runnableJobs,
} from './build-details.js';
export { onBuildFinished, triggerOnPullRequest, triggerOnPullRequestClosed, triggerOnRefsUpdated } from './build-events.js';
export { queryBuilds } from './build-query.js';
export {
  buildByReference,
  buildCommitOf,
  buildLog,
  cancelBuild,
  createBuildLabel,
  deleteBuild,
  deleteBuildLabel,
  fixedIssueIds,
  getBuild,
  getBuildDependences,
  getBuildLabels,
  getBuildParams,
  reassignBuildUsers,
  rebuild,
  runJob,
} from './builds.js';
export { buildStatusCondition, currentBuildRows, deletePullRequestBuilds, getCurrentBuilds } from './pull-request-builds.js';
export { agentOfBuildReference, agentsRunningBuildsCondition, buildsRanOnAgent, forgetAgents, runningBuildCounts } from './ran-on-agents.js';
export { BuildScheduler } from './scheduler.js';
export { triggerJob } from './trigger-job.js';
export { onProjectsDeleting as onBuildsProjectsDeleting } from './storage.js';
export { buildsFinishedAfter, findBuildRow, runningJobLeases, unfinishedBuildCounts, type JobLease } from './build-monitoring.js';
export {
  executorEngineSockets,
  getJobExecutors,
  isDockerExecutor,
  isRemoteExecutor,
  type JobExecutor,
  type JobExecutorType,
  JOB_EXECUTOR_TYPES,
  newJobExecutor,
  type RemoteDockerExecutor,
  type RemoteShellExecutor,
  type ServerDockerExecutor,
  type ServerShellExecutor,
  setJobExecutors,
} from './job-executors.js';
export { agentConnect, agentHeartbeat, agentLease, buildLeaseMs } from './agent-leases.js';
export { removeUnrecordedCacheArchives } from './job-caches.js';
export {
  appendJobLog,
  authorizeJob,
  finishAgentJob,
  openDependencyArtifact,
  openJobCache,
  openJobLfsObject,
  publishJobArtifact,
  saveJobCache,
  type JobGrant,
} from './agent-jobs.js';
