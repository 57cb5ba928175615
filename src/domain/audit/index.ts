/**
 * The door of the audit area (docs/architecture.md#domain-areas): the audit log of
 * security-relevant changes (docs/audit-log.md), written in the transaction of each change.
 */
export { recordAudit, type AuditEvent } from './audit-log.js';
