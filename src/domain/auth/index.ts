/**
 * The door of the auth area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { actorOfUser, authenticateBasic, authenticateBearer, CACHED_TABLES, cachedBearerActor, isPasswordOf, signInFirstStep } from './authenticate.js';
export { completeSecondStep, pendingSignIn, type PendingSignIn, SECOND_STEP_TTL_MS, startSecondStep } from './second-step.js';
export {
  confirmTotp,
  disableTwoFactor,
  finishSecurityKeyRegistration,
  hasSecondFactor,
  type PasswordCheck,
  regenerateRecoveryCodes,
  removeSecurityKey,
  resetTwoFactor,
  type SecondFactorAnswer,
  startSecurityKeyRegistration,
  startTotpEnrolment,
  twoFactorState,
  type TwoFactorState,
} from './two-factor.js';
export { createSession, endSession, endSessionById, endUserSessions, findSession, listSessions, type SessionInfo } from './sessions.js';
export { noteTokenUse } from './credential-uses.js';
