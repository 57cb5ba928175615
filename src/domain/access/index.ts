/**
 * The door of the access area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { createGroup, deleteGroup, getGroup, type GroupData, groupMemberships, queryGroups, referencedGroup, updateGroup } from './groups.js';
export { createMembership, deleteMembership, getMembership, syncMemberships, userMemberships } from './memberships.js';
export { referencedRole, referencedUser } from './references.js';
export { createRole, deleteRole, getRole, queryRoles, type RoleData, updateRole } from './roles.js';
export { createDefaultRoles } from './default-roles.js';
export {
  findGroupIdByName,
  type GroupFlags,
  groupFlags,
  groupFlagsOfUser,
  groupMemberIds,
  groupNameOf,
  groupNamesByIds,
  groupNamesOfUser,
  membershipGroupIds,
  roleExists,
  roleNameOf,
  roleNames,
  rolesWhere,
} from './lookups.js';
