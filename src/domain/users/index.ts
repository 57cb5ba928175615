/**
 * The door of the users area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { type Avatar, avatarVersions, deleteAvatar, hasUploadedAvatar, uploadAvatar, userAvatar, type UserCard, userCard } from './avatars.js';
export {
  type AccessTokenData,
  type AccessTokenInfo,
  accessTokenOwner,
  createAccessToken,
  CREDENTIAL_USE_GRANULARITY_MS,
  type CredentialUse,
  deleteAccessToken,
  deleteAccessTokenById,
  listAccessTokens,
  noteAccessTokenUse,
} from './access-tokens.js';
export { criterionUser, userIdByLogin } from './criteria.js';
export {
  addEmailAddress,
  deleteEmailAddress,
  type EmailAddress,
  type EmailUser,
  listEmailAddresses,
  setEmailAddressRole,
  usersByVerifiedEmails,
  verifiedEmailAddresses,
  verifiedEmailOwners,
} from './email-addresses.js';
export {
  findUserIdByName,
  findUserRow,
  mentionedUserIds,
  ordinaryUserIds,
  primaryEmails,
  userBySignInName,
  userDisplayName,
  userExists,
  userIdByName,
  userIdsByNames,
  userNameOf,
  userNamesByIds,
} from './directory.js';
export {
  createExternalUser,
  type ExternalProfile,
  isExternalPassword,
  LDAP_PROVIDER,
  linkByVerifiedEmail,
  linkedUser,
  oidcProvider,
  updateExternalFullName,
} from './external-identities.js';
export { gitIdentity, systemIdentity } from './identities.js';
export { hashPassword, verifyPassword } from './passwords.js';
export { resetPassword } from './reset-password.js';
export { addSshKey, deleteSshKey, getSshKey, listSshKeys, sshKeyFingerprint, sshKeyOwner } from './ssh-keys.js';
export {
  createUser,
  deleteUser,
  getMyProfile,
  getUser,
  getUserRow,
  normalizeEmail,
  normalizeUserName,
  queryUsers,
  requireSelfOrAdmin,
  setPassword,
  updateUser,
} from './users.js';
export { createBuiltInUsers } from './built-in-users.js';
