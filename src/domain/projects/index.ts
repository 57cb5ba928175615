/**
 * The door of the projects area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  createGroupAuthorization,
  createUserAuthorization,
  deleteGroupAuthorization,
  deleteUserAuthorization,
  getGroupAuthorization,
  getUserAuthorization,
  groupAuthorizations,
  projectGroupAuthorizations,
  projectUserAuthorizations,
  roleUsages,
  updateGroupAuthorization,
  updateUserAuthorization,
  userAuthorizations,
} from './authorizations.js';
export { branchProtection, checkPush } from './branch-protection.js';
export { checkCommitMessages } from './commit-messages.js';
export { topContributors } from './contributors.js';
export { projectCommit, projectIdsMatchingPath } from './criteria.js';
export { forkOrigin, projectForks } from './forks.js';
export { checkJobMatch, decryptedSecret, encryptPlaintextJobSecrets, hasValue, hierarchySecrets, type SecretDefinition } from './job-secrets.js';
export {
  createLabelSpec,
  createProjectLabel,
  deleteLabelSpec,
  deleteProjectLabel,
  getLabelSpec,
  getProjectLabel,
  labelSpecExists,
  labelSpecIdByName,
  projectLabels,
  queryLabelSpecs,
  updateLabelSpec,
} from './labels.js';
export {
  createMilestone,
  deleteMilestone,
  getMilestone,
  issuesScheduledOn,
  type MilestoneData,
  milestoneIdsNamed,
  milestoneProjectPaths,
  type MilestoneRow,
  milestonesByIds,
  queryMilestones,
  updateMilestone,
} from './milestones.js';
export { type MemberProject, memberProjects, type MemberRole } from './member-projects.js';
export { directForkIds, forkAncestorIds, forkRootId, takeNextNumber } from './numbers.js';
export {
  accessibleProjectsCondition,
  ancestorPaths,
  canAccess,
  canReadCode,
  jobPermissions,
  type JobPermissions,
  type JobPrivilege,
  loadProjectWith,
  projectPermissions,
  type ProjectPermissions,
  type ProjectPrivilege,
  visibleProjectIds,
  roleJobPrivileges,
} from './permissions.js';
export { reviewRequirementItems } from './principal-expressions.js';
export { queryProjects } from './project-query.js';
export { assertNotPullMirror, hasPullMirror, PULL_MIRROR_REFUSAL } from './pull-mirror-guard.js';
export {
  allProjectIds,
  cloneUrls,
  createProject,
  deleteProject,
  findProjectByPath,
  findProjectRow,
  getProject,
  getProjectRow,
  type ProjectData,
  projectPathsByIds,
  projectsByLowerPaths,
  recordRefsUpdated,
  updateProject,
} from './projects.js';
export { authorizeRepository } from './repository-access.js';
export { requiredJobs } from './required-jobs.js';
export { decryptSecret, encryptSecret, isEncryptedSecret, secretKey } from './secret-encryption.js';
export { grantableRoles, groupIdByName, labelSpecChoices, type MemberGrant, projectLabelNames, projectMembers, userIdByName } from './settings-views.js';
export { getProjectSetting, type ProjectSetting, projectsReferencing, renameReferences, storedSettingsByPath, updateProjectSetting } from './settings.js';
export { WEBHOOK_EVENT_TYPES, webHooksFor } from './webhook-settings.js';
