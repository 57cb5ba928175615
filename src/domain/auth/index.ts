/**
 * The door of the auth area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { actorOfUser, authenticateBasic, signInToWeb, authenticateBearer, CACHED_TABLES, cachedBearerActor } from './authenticate.js';
export { createSession, endSession, endUserSessions, findSession, SESSION_TTL_MS } from './sessions.js';
