import { Type } from '@sinclair/typebox';
import type { AuditEventRow } from '../db/schema.js';
import { BadRequest } from '../errors.js';
import { toWireDate } from './dates.js';

/** One row of the audit log on the wire (docs/audit-log.md#what-a-row-holds; a Gitloom resource, OneDev has none). */
export const AuditEventSchema = Type.Object(
  {
    id: Type.Integer(),
    time: Type.String({ description: 'ISO-8601 date of the change' }),
    actorId: Type.Union([Type.Integer(), Type.Null()]),
    actorName: Type.String(),
    address: Type.Union([Type.String(), Type.Null()]),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    action: Type.String(),
    targetType: Type.String(),
    targetId: Type.Union([Type.String(), Type.Null()]),
    targetName: Type.Union([Type.String(), Type.Null()]),
    projectId: Type.Union([Type.Integer(), Type.Null()]),
    summary: Type.Union([Type.Object({ before: Type.Optional(Type.Unknown()), after: Type.Optional(Type.Unknown()) }), Type.Null()]),
    cursor: Type.String({ description: 'pass as `before` to read the rows older than this one' }),
  },
  { $id: 'AuditEvent' },
);

/** Maps an audit row to {@link AuditEventSchema}: the date as ISO-8601, the summary parsed, the row's keyset cursor. */
export function toWireAuditEvent(row: AuditEventRow) {
  return {
    id: row.id,
    time: toWireDate(row.time),
    actorId: row.actorId,
    actorName: row.actorName,
    address: row.address,
    userAgent: row.userAgent,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    targetName: row.targetName,
    projectId: row.projectId,
    summary: row.summary === null ? null : (JSON.parse(row.summary) as { before?: unknown; after?: unknown }),
    cursor: auditCursor(row),
  };
}

/** The keyset cursor of a row, as the pages and the API write it: `<time>.<id>` ({@link parseAuditCursor}). */
export function auditCursor(row: Pick<AuditEventRow, 'time' | 'id'>): string {
  return `${row.time}.${row.id}`;
}

/** Reads a cursor written by {@link auditCursor}; BadRequest `Invalid cursor: …` for anything else. */
export function parseAuditCursor(text: string): { time: number; id: number } {
  const match = /^(\d{1,15})\.(\d{1,10})$/.exec(text);
  // ids are int32 (the column's range)
  if (!match || Number(match[2]) > 2147483647) throw new BadRequest(`Invalid cursor: ${text}`);
  return { time: Number(match[1]), id: Number(match[2]) };
}
