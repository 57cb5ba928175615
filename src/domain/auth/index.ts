/**
 * The door of the auth area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { actorOfUser, authenticateBasic, authenticateBearer, CACHED_TABLES, cachedBearerActor } from './authenticate.js';
export { createSession, endSession, endSessionById, endUserSessions, findSession, listSessions, type SessionInfo } from './sessions.js';
export { noteTokenUse } from './credential-uses.js';
