/**
 * The door of the code-comments area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { queryCodeComments } from './code-comment-query.js';
export { createCodeComment, deleteCodeComment, getCodeComment, type PlanarRange, reassignCodeCommentAuthors, updateCodeComment } from './code-comments.js';
export { createCodeCommentReply, deleteCodeCommentReply, getCodeCommentReply, listCodeCommentReplies, updateCodeCommentReply } from './replies.js';
export {
  codeCommentProjects,
  type CodeCommentReplyRow,
  type CodeCommentRow,
  MAX_INLINE_COMMENTS,
  type RequestCodeComments,
  requestCodeComments,
  requestCommentRange,
} from './request-comments.js';
export { findCodeCommentRow } from './code-comment-rows.js';
export {
  applySuggestions,
  type CommentPart,
  type RequestSuggestions,
  requestSuggestions,
  splitSuggestions,
  suggestionOf,
  type SuggestionView,
} from './suggestions.js';
