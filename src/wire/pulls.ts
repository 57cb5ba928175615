import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/** MergeStrategy enum (docs/compatibility.md#pull-requests-merge-strategies-and-preview). */
export const MergeStrategySchema = Type.Union([
  Type.Literal('CREATE_MERGE_COMMIT'),
  Type.Literal('CREATE_MERGE_COMMIT_IF_NECESSARY'),
  Type.Literal('SQUASH_SOURCE_BRANCH_COMMITS'),
  Type.Literal('REBASE_SOURCE_BRANCH_COMMITS'),
]);

/** PullRequest JSON (docs/compatibility.md#pull-requests-json), fields in OneDev's order. */
export const PullRequestSchema = Type.Object(
  {
    id: Type.Integer(),
    status: Type.String(),
    title: Type.String(),
    description: Nullable(Type.String()),
    submitterId: Type.Integer(),
    numberScopeId: Type.Integer(),
    targetProjectId: Type.Integer(),
    targetBranch: Type.String(),
    sourceProjectId: Nullable(Type.Integer()),
    sourceBranch: Type.String(),
    baseCommitHash: Type.String(),
    buildCommitHash: Nullable(Type.String()),
    submitDate: WireDate,
    mergeStrategy: Type.String(),
    uuid: Type.String(),
    number: Type.Integer(),
    commentCount: Type.Integer(),
    lastActivity: Type.Object({ userId: Nullable(Type.Integer()), date: WireDate, description: Type.String() }),
    codeCommentsUpdateDate: Nullable(WireDate),
    checkError: Nullable(Type.String()),
  },
  { $id: 'PullRequest' },
);

/** Maps a pull request row to its wire shape. */
export function toWirePullRequest(row: {
  id: number;
  status: string;
  title: string;
  description: string | null;
  submitterId: number;
  numberScopeId: number;
  targetProjectId: number;
  targetBranch: string;
  sourceProjectId: number | null;
  sourceBranch: string;
  baseCommitHash: string;
  buildCommitHash: string | null;
  submitDate: number;
  mergeStrategy: string;
  uuid: string;
  number: number;
  commentCount: number;
  lastActivityUserId: number | null;
  lastActivityDate: number;
  lastActivityDescription: string;
  codeCommentsUpdateDate: number | null;
  checkError: string | null;
}) {
  return {
    id: row.id,
    status: row.status,
    title: row.title,
    description: row.description,
    submitterId: row.submitterId,
    numberScopeId: row.numberScopeId,
    targetProjectId: row.targetProjectId,
    targetBranch: row.targetBranch,
    sourceProjectId: row.sourceProjectId,
    sourceBranch: row.sourceBranch,
    baseCommitHash: row.baseCommitHash,
    buildCommitHash: row.buildCommitHash,
    submitDate: toWireDate(row.submitDate),
    mergeStrategy: row.mergeStrategy,
    uuid: row.uuid,
    number: row.number,
    commentCount: row.commentCount,
    lastActivity: { userId: row.lastActivityUserId, date: toWireDate(row.lastActivityDate), description: row.lastActivityDescription },
    codeCommentsUpdateDate: toWireDate(row.codeCommentsUpdateDate),
    checkError: row.checkError,
  };
}

/** MergePreview JSON (docs/compatibility.md#pull-requests-merge-strategies-and-preview). */
export const MergePreviewSchema = Type.Object({
  targetHeadCommitHash: Type.String(),
  headCommitHash: Type.String(),
  mergeStrategy: Type.String(),
  mergeCommitHash: Nullable(Type.String()),
});

/** PullRequestUpdate JSON (docs/compatibility.md#pull-requests-sub-entities). */
export const PullRequestUpdateSchema = Type.Object({
  id: Type.Integer(),
  requestId: Type.Integer(),
  headCommitHash: Type.String(),
  targetHeadCommitHash: Type.String(),
  date: WireDate,
});

/** Maps an update row to its wire shape. */
export function toWirePullRequestUpdate(row: { id: number; requestId: number; headCommitHash: string; targetHeadCommitHash: string; date: number }) {
  return {
    id: row.id,
    requestId: row.requestId,
    headCommitHash: row.headCommitHash,
    targetHeadCommitHash: row.targetHeadCommitHash,
    date: toWireDate(row.date),
  };
}

/** PullRequestReview JSON (docs/compatibility.md#pull-requests-sub-entities). */
export const PullRequestReviewSchema = Type.Object({
  id: Type.Integer(),
  userId: Type.Integer(),
  requestId: Type.Integer(),
  status: Type.String(),
  statusDate: WireDate,
});

/** Maps a review row to its wire shape. */
export function toWirePullRequestReview(row: { id: number; userId: number; requestId: number; status: string; statusDate: number }) {
  return { id: row.id, userId: row.userId, requestId: row.requestId, status: row.status, statusDate: toWireDate(row.statusDate) };
}

/** PullRequestAssignment JSON. */
export const PullRequestAssignmentSchema = Type.Object({ id: Type.Integer(), userId: Type.Integer(), requestId: Type.Integer() });

/** Maps an assignment row to its wire shape. */
export function toWirePullRequestAssignment(row: { id: number; userId: number; requestId: number }) {
  return { id: row.id, userId: row.userId, requestId: row.requestId };
}

/** PullRequestWatch JSON. */
export const PullRequestWatchSchema = Type.Object({ id: Type.Integer(), requestId: Type.Integer(), userId: Type.Integer(), watching: Type.Boolean() });

/** Maps a watch row to its wire shape (`watching` as a boolean). */
export function toWirePullRequestWatch(row: { id: number; requestId: number; userId: number; watching: number }) {
  return { id: row.id, requestId: row.requestId, userId: row.userId, watching: row.watching === 1 };
}

/** PullRequestComment JSON. */
export const PullRequestCommentSchema = Type.Object({
  id: Type.Integer(),
  date: WireDate,
  userId: Type.Integer(),
  content: Type.String(),
  requestId: Type.Integer(),
});

/** Maps a comment row to its wire shape. */
export function toWirePullRequestComment(row: { id: number; date: number; userId: number; content: string; requestId: number }) {
  return { id: row.id, date: toWireDate(row.date), userId: row.userId, content: row.content, requestId: row.requestId };
}

/** PullRequestLabel JSON. */
export const PullRequestLabelSchema = Type.Object({ id: Type.Integer(), requestId: Type.Integer(), specId: Type.Integer() });

/** Maps a label row to its wire shape. */
export function toWirePullRequestLabel(row: { id: number; requestId: number; specId: number }) {
  return { id: row.id, requestId: row.requestId, specId: row.specId };
}

/** PullRequestChange JSON: `data` is polymorphic with `@type` first (docs/compatibility.md#pull-requests-sub-entities). */
export const PullRequestChangeSchema = Type.Object({
  id: Type.Integer(),
  requestId: Type.Integer(),
  userId: Nullable(Type.Integer()),
  date: WireDate,
  data: Type.Object({ '@type': Type.String() }, { additionalProperties: true }),
});

/** Maps a change row (data stored as JSON text) to its wire shape. */
export function toWirePullRequestChange(row: { id: number; requestId: number; userId: number | null; date: number; data: string }) {
  return { id: row.id, requestId: row.requestId, userId: row.userId, date: toWireDate(row.date), data: JSON.parse(row.data) as { '@type': string } };
}
