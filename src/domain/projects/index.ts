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
  updateGroupAuthorization,
  updateUserAuthorization,
  userAuthorizations,
} from './authorizations.js';
export { branchProtection, checkPush } from './branch-protection.js';
export { checkCommitMessages } from './commit-messages.js';
export { topContributors } from './contributors.js';
export { projectCommit, projectIdsMatchingPath } from './criteria.js';
export { forkOrigin, projectForks } from './forks.js';
export { decryptedSecret, encryptPlaintextJobSecrets, hasValue, hierarchySecrets, type SecretDefinition } from './job-secrets.js';
export {
  createLabelSpec,
  createProjectLabel,
  deleteLabelSpec,
  deleteProjectLabel,
  getLabelSpec,
  getProjectLabel,
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
  type MilestoneRow,
  queryMilestones,
  updateMilestone,
} from './milestones.js';
export { forkRootId, takeNextNumber } from './numbers.js';
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
  roleJobPrivileges,
} from './permissions.js';
export { reviewRequirementItems } from './principal-expressions.js';
export { queryProjects } from './project-query.js';
export {
  cloneUrls,
  createProject,
  deleteProject,
  findProjectByPath,
  getProject,
  getProjectRow,
  type ProjectData,
  recordRefsUpdated,
  updateProject,
} from './projects.js';
export { authorizeRepository } from './repository-access.js';
export { requiredJobs } from './required-jobs.js';
export { secretKey } from './secret-encryption.js';
export { grantableRoles, groupIdByName, labelSpecChoices, type MemberGrant, projectLabelNames, projectMembers, userIdByName } from './settings-views.js';
export { getProjectSetting, type ProjectSetting, projectsReferencing, renameReferences, updateProjectSetting } from './settings.js';
export { WEBHOOK_EVENT_TYPES, webHooksFor } from './webhook-settings.js';
export { allProjectIds, projectPathOf } from './project-lookups.js';
