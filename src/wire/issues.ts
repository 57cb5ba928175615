import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

const LastActivity = Type.Object({ userId: Nullable(Type.Integer()), date: WireDate, description: Type.String() });

/** Issue JSON (docs/compatibility.md#issues), fields in OneDev's order. */
export const IssueSchema = Type.Object(
  {
    id: Type.Integer(),
    state: Type.String(),
    stateOrdinal: Type.Integer(),
    title: Type.String(),
    description: Nullable(Type.String()),
    numberScopeId: Type.Integer(),
    projectId: Type.Integer(),
    submitterId: Type.Integer(),
    submitDate: WireDate,
    voteCount: Type.Integer(),
    commentCount: Type.Integer(),
    uuid: Type.String(),
    number: Type.Integer(),
    threadingReference: Nullable(Type.String()),
    lastActivity: LastActivity,
    confidential: Type.Boolean(),
    pinDate: Nullable(WireDate),
  },
  { $id: 'Issue' },
);

/** Maps an issue row (plus its state's ordinal) to its wire shape. */
export function toWireIssue(
  row: {
    id: number;
    state: string;
    title: string;
    description: string | null;
    numberScopeId: number;
    projectId: number;
    submitterId: number;
    submitDate: number;
    voteCount: number;
    commentCount: number;
    uuid: string;
    number: number;
    threadingReference: string | null;
    lastActivityUserId: number | null;
    lastActivityDate: number;
    lastActivityDescription: string;
    confidential: number;
    pinDate: number | null;
  },
  stateOrdinal: number,
) {
  return {
    id: row.id,
    state: row.state,
    stateOrdinal,
    title: row.title,
    description: row.description,
    numberScopeId: row.numberScopeId,
    projectId: row.projectId,
    submitterId: row.submitterId,
    submitDate: toWireDate(row.submitDate),
    voteCount: row.voteCount,
    commentCount: row.commentCount,
    uuid: row.uuid,
    number: row.number,
    threadingReference: row.threadingReference,
    lastActivity: { userId: row.lastActivityUserId, date: toWireDate(row.lastActivityDate), description: row.lastActivityDescription },
    confidential: Boolean(row.confidential),
    pinDate: toWireDate(row.pinDate),
  };
}

/** IssueField JSON (docs/compatibility.md#issues). */
export const IssueFieldSchema = Type.Object({
  id: Type.Integer(),
  issueId: Type.Integer(),
  name: Type.String(),
  value: Nullable(Type.String()),
  type: Type.String(),
  ordinal: Type.Integer(),
});

/** Maps an issue field row. */
export function toWireIssueField(row: { id: number; issueId: number; name: string; value: string | null; type: string; ordinal: number }) {
  return { id: row.id, issueId: row.issueId, name: row.name, value: row.value, type: row.type, ordinal: row.ordinal };
}

/** IssueChange JSON: `{id, issueId, userId, date, data}` with `data` carrying `@type` first. */
export const IssueChangeSchema = Type.Object({
  id: Type.Integer(),
  issueId: Type.Integer(),
  userId: Nullable(Type.Integer()),
  date: WireDate,
  data: Type.Object({ '@type': Type.String() }, { additionalProperties: true }),
});

/** Maps an issue change row. */
export function toWireIssueChange(row: { id: number; issueId: number; userId: number | null; date: number; data: string }) {
  return { id: row.id, issueId: row.issueId, userId: row.userId, date: toWireDate(row.date), data: JSON.parse(row.data) as { '@type': string } };
}

/** IssueComment JSON (docs/compatibility.md#issue-comments). */
export const IssueCommentSchema = Type.Object({
  id: Type.Integer(),
  date: WireDate,
  userId: Type.Integer(),
  content: Type.String(),
  issueId: Type.Integer(),
});

/** Maps an issue comment row. */
export function toWireIssueComment(row: { id: number; date: number; userId: number; content: string; issueId: number }) {
  return { id: row.id, date: toWireDate(row.date), userId: row.userId, content: row.content, issueId: row.issueId };
}

/** IssueWatch JSON (docs/compatibility.md#issue-watches-and-votes). */
export const IssueWatchSchema = Type.Object({ id: Type.Integer(), issueId: Type.Integer(), userId: Type.Integer(), watching: Type.Boolean() });

/** Maps an issue watch row. */
export function toWireIssueWatch(row: { id: number; issueId: number; userId: number; watching: number }) {
  return { id: row.id, issueId: row.issueId, userId: row.userId, watching: Boolean(row.watching) };
}

/** IssueVote JSON (docs/compatibility.md#issue-watches-and-votes). */
export const IssueVoteSchema = Type.Object({ id: Type.Integer(), issueId: Type.Integer(), userId: Type.Integer(), date: WireDate });

/** Maps an issue vote row. */
export function toWireIssueVote(row: { id: number; issueId: number; userId: number; date: number }) {
  return { id: row.id, issueId: row.issueId, userId: row.userId, date: toWireDate(row.date) };
}

/** `[{projectId, commitHash}]` of `/issues/{id}/commits`. */
export const IssueCommitSchema = Type.Object({ projectId: Type.Integer(), commitHash: Type.String() });
