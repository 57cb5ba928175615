import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

export const MergeStrategySchema = Type.Union([
  Type.Literal('CREATE_MERGE_COMMIT'),
  Type.Literal('CREATE_MERGE_COMMIT_IF_NECESSARY'),
  Type.Literal('SQUASH_SOURCE_BRANCH_COMMITS'),
  Type.Literal('REBASE_SOURCE_BRANCH_COMMITS'),
]);

/** PullRequest JSON (reference/pulls.md §2), fields in the reference's order. */
export const PullRequestSchema = Type.Object({
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
}, { $id: 'PullRequest' });

/** Maps a pull request row to its wire shape. */
export function toWirePullRequest(row: {
  id: number; status: string; title: string; description: string | null; submitterId: number; numberScopeId: number;
  targetProjectId: number; targetBranch: string; sourceProjectId: number | null; sourceBranch: string; baseCommitHash: string;
  buildCommitHash: string | null; submitDate: number; mergeStrategy: string; uuid: string; number: number; commentCount: number;
  lastActivityUserId: number | null; lastActivityDate: number; lastActivityDescription: string; codeCommentsUpdateDate: number | null;
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

/** MergePreview JSON (reference/pulls.md §4). */
export const MergePreviewSchema = Type.Object({
  targetHeadCommitHash: Type.String(),
  headCommitHash: Type.String(),
  mergeStrategy: Type.String(),
  mergeCommitHash: Nullable(Type.String()),
});

/** PullRequestUpdate JSON (reference/pulls.md §5). */
export const PullRequestUpdateSchema = Type.Object({
  id: Type.Integer(),
  requestId: Type.Integer(),
  headCommitHash: Type.String(),
  targetHeadCommitHash: Type.String(),
  date: WireDate,
});

/** Maps an update row to its wire shape. */
export function toWirePullRequestUpdate(row: { id: number; requestId: number; headCommitHash: string; targetHeadCommitHash: string; date: number }) {
  return { id: row.id, requestId: row.requestId, headCommitHash: row.headCommitHash, targetHeadCommitHash: row.targetHeadCommitHash, date: toWireDate(row.date) };
}
