/**
 * The door of the audit area (docs/architecture.md#domain-areas): the audit log of
 * security-relevant changes (docs/audit-log.md), written in the transaction of each change, read
 * by the pages and the API, exported, and pruned after the retention.
 */
export { auditChanges, recordAudit, type AuditEvent } from './audit-log.js';
export { exportAuditEvents, pruneAuditEvents, queryAuditEvents, readAuditEvents, type AuditCursor, type AuditFilter, type AuditPage } from './audit-queries.js';
export { AuditRetention, RETENTION_EVERY_MS, type AuditRetentionOptions } from './retention.js';
export type { AuditEventRow } from '../../db/schema.js';
