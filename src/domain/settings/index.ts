/**
 * The door of the settings area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  getAuditSetting,
  setAuditSetting,
  type AuditSetting,
  getSecuritySetting,
  getStoredJobExecutors,
  type SecuritySetting,
  setSecuritySetting,
  setStoredJobExecutors,
} from './settings.js';
