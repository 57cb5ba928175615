/**
 * The door of the settings area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { getSecuritySetting, type SecuritySetting, setSecuritySetting } from './settings.js';
