import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/** `mark.range` (docs/compatibility.md#code-comments). */
export const PlanarRangeSchema = Type.Object({
  fromRow: Type.Integer(),
  fromColumn: Type.Integer(),
  toRow: Type.Integer(),
  toColumn: Type.Integer(),
  tabWidth: Type.Integer(),
});

/** `mark`. */
export const MarkSchema = Type.Object({ commitHash: Type.String(), path: Type.String(), range: PlanarRangeSchema });

/** `compareContext`. */
export const CompareContextSchema = Type.Object({
  pullRequestId: Nullable(Type.Integer()),
  oldCommitHash: Type.String(),
  newCommitHash: Type.String(),
  pathFilter: Nullable(Type.String()),
  currentFile: Nullable(Type.String()),
  whitespaceOption: Type.String(),
});

/** CodeComment JSON (docs/compatibility.md#code-comments), fields in OneDev's order. */
export const CodeCommentSchema = Type.Object(
  {
    id: Type.Integer(),
    projectId: Type.Integer(),
    userId: Type.Integer(),
    content: Type.String(),
    createDate: WireDate,
    lastActivity: Type.Object({ userId: Nullable(Type.Integer()), date: WireDate, description: Type.String() }),
    replyCount: Type.Integer(),
    mark: MarkSchema,
    compareContext: CompareContextSchema,
    resolved: Type.Boolean(),
    uuid: Type.String(),
  },
  { $id: 'CodeComment' },
);

interface CompareColumns {
  comparePullRequestId: number | null;
  compareOldCommitHash: string;
  compareNewCommitHash: string;
  comparePathFilter: string | null;
  compareCurrentFile: string | null;
  compareWhitespaceOption: string;
}

function toWireCompareContext(row: CompareColumns) {
  return {
    pullRequestId: row.comparePullRequestId,
    oldCommitHash: row.compareOldCommitHash,
    newCommitHash: row.compareNewCommitHash,
    pathFilter: row.comparePathFilter,
    currentFile: row.compareCurrentFile,
    whitespaceOption: row.compareWhitespaceOption,
  };
}

/** Maps a code comment row to its wire shape. */
export function toWireCodeComment(
  row: CompareColumns & {
    id: number;
    projectId: number;
    userId: number;
    content: string;
    createDate: number;
    lastActivityUserId: number | null;
    lastActivityDate: number;
    lastActivityDescription: string;
    replyCount: number;
    markCommitHash: string;
    markPath: string;
    markFromRow: number;
    markFromColumn: number;
    markToRow: number;
    markToColumn: number;
    markTabWidth: number;
    resolved: number;
    uuid: string;
  },
) {
  return {
    id: row.id,
    projectId: row.projectId,
    userId: row.userId,
    content: row.content,
    createDate: toWireDate(row.createDate),
    lastActivity: { userId: row.lastActivityUserId, date: toWireDate(row.lastActivityDate), description: row.lastActivityDescription },
    replyCount: row.replyCount,
    mark: {
      commitHash: row.markCommitHash,
      path: row.markPath,
      range: { fromRow: row.markFromRow, fromColumn: row.markFromColumn, toRow: row.markToRow, toColumn: row.markToColumn, tabWidth: row.markTabWidth },
    },
    compareContext: toWireCompareContext(row),
    resolved: Boolean(row.resolved),
    uuid: row.uuid,
  };
}

/** CodeCommentReply JSON (docs/compatibility.md#code-comment-replies). */
export const CodeCommentReplySchema = Type.Object({
  id: Type.Integer(),
  date: WireDate,
  userId: Type.Integer(),
  content: Type.String(),
  commentId: Type.Integer(),
  compareContext: CompareContextSchema,
});

/** Maps a reply row. */
export function toWireCodeCommentReply(row: CompareColumns & { id: number; date: number; userId: number; content: string; commentId: number }) {
  return {
    id: row.id,
    date: toWireDate(row.date),
    userId: row.userId,
    content: row.content,
    commentId: row.commentId,
    compareContext: toWireCompareContext(row),
  };
}
