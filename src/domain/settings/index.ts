/**
 * The door of the settings area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  getAuditSetting,
  setAuditSetting,
  type AuditSetting,
  getSecuritySetting,
  getStoredAuthenticator,
  getStoredJobExecutors,
  getStoredSsoConnectors,
  type SecuritySetting,
  setSecuritySetting,
  setStoredAuthenticator,
  setStoredJobExecutors,
  setStoredSsoConnectors,
} from './settings.js';
