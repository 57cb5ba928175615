import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createCodeComment,
  createCodeCommentReply,
  deleteCodeComment,
  deleteCodeCommentReply,
  getCodeComment,
  getCodeCommentReply,
  listCodeCommentReplies,
  queryCodeComments,
  updateCodeComment,
  updateCodeCommentReply,
} from '../../domain/code-comments/index.js';
import { CodeCommentReplySchema, CodeCommentSchema, toWireCodeComment, toWireCodeCommentReply } from '../../wire/code-comments.js';
import { childList, childListRoutes, queryRoute, itemDeleteRoute, itemGetRoute } from '../resource-routes.js';
import { crudRoutes, type CrudResource } from '../crud.js';
import { CreatedId, InputDate, inputDate, Nullable } from '../schemas/common.js';

const strict = { additionalProperties: false } as const;
const RangeBody = Type.Object(
  {
    fromRow: Type.Integer(),
    fromColumn: Type.Integer(),
    toRow: Type.Integer(),
    toColumn: Type.Integer(),
    tabWidth: Type.Optional(Type.Integer()),
  },
  strict,
);
const MarkBody = Type.Object({ commitHash: Type.String(), path: Type.String(), range: RangeBody }, strict);
const CompareBody = Type.Object(
  {
    pullRequestId: Type.Optional(Nullable(Type.Integer())),
    oldCommitHash: Type.String(),
    newCommitHash: Type.String(),
    pathFilter: Type.Optional(Nullable(Type.String())),
    currentFile: Type.Optional(Nullable(Type.String())),
    whitespaceOption: Type.Optional(Type.String()),
  },
  strict,
);
const CommentFields = {
  projectId: Type.Integer(),
  userId: Type.Integer(),
  content: Type.String(),
  createDate: InputDate,
  mark: MarkBody,
  compareContext: CompareBody,
  resolved: Type.Boolean(),
  uuid: Type.String(),
};
const CommentCreate = Type.Object(
  {
    ...CommentFields,
    userId: Type.Optional(CommentFields.userId),
    createDate: Type.Optional(InputDate),
    resolved: Type.Optional(Type.Boolean()),
    uuid: Type.Optional(Type.String()),
  },
  strict,
);
const CommentUpdate = Type.Partial(Type.Object(CommentFields, strict));
const ReplyFields = { commentId: Type.Integer(), userId: Type.Integer(), content: Type.String(), date: InputDate, compareContext: CompareBody };
const ReplyCreate = Type.Object({ ...ReplyFields, userId: Type.Optional(ReplyFields.userId), date: Type.Optional(InputDate) }, strict);
const ReplyUpdate = Type.Partial(Type.Object(ReplyFields, strict));

const tags = ['Code Comment'];
const CommentParent = { path: '/code-comments', idParam: 'commentId', tags };
const CommentId = Type.Object({ commentId: Type.Integer() });

/** `/code-comment-replies` (docs/compatibility.md#code-comment-replies): the standard resource. */
const replies: CrudResource<Parameters<typeof toWireCodeCommentReply>[0], typeof ReplyCreate, typeof ReplyUpdate> = {
  tag: 'Code Comment Reply',
  collection: '/code-comment-replies',
  idParam: 'replyId',
  schema: CodeCommentReplySchema,
  toWire: toWireCodeCommentReply,
  get: getCodeCommentReply,
  create: { body: ReplyCreate, run: (ctx, body) => createCodeCommentReply(ctx, { ...body, date: inputDate(body.date, 'date') }) },
  update: { body: ReplyUpdate, run: (ctx, id, body) => updateCodeCommentReply(ctx, id, { ...body, date: inputDate(body.date, 'date') }) },
  delete: deleteCodeCommentReply,
};

/** `/~api/code-comments` (docs/compatibility.md#code-comments) and `/code-comment-replies` (docs/compatibility.md#code-comment-replies). */
export const codeCommentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  itemGetRoute(app, CommentParent, 'Get Basic Info', CodeCommentSchema, getCodeComment, toWireCodeComment);
  childListRoutes(app, CommentParent, [childList('replies', 'Get Replies', CodeCommentReplySchema, listCodeCommentReplies, toWireCodeCommentReply)]);
  queryRoute(app, {
    path: '/code-comments',
    tags,
    summary: 'Query Basic Info',
    params: { projectId: Type.Optional(Type.Integer()), pullRequestId: Type.Optional(Type.Integer()), query: Type.Optional(Type.String()) },
    schema: CodeCommentSchema,
    run: (ctx, { projectId, pullRequestId, query }, offset, count) => queryCodeComments(ctx, { projectId, pullRequestId }, query ?? '', offset, count),
    toWire: toWireCodeComment,
  });
  app.post('/code-comments', { schema: { tags, summary: 'Create', body: CommentCreate, response: { 200: CreatedId } } }, async (request) =>
    createCodeComment(request.ctx, { ...request.body, createDate: inputDate(request.body.createDate, 'createDate') }),
  );
  app.post('/code-comments/:commentId', { schema: { tags, summary: 'Update', params: CommentId, body: CommentUpdate } }, async (request) => {
    await updateCodeComment(request.ctx, request.params.commentId, { ...request.body, createDate: inputDate(request.body.createDate, 'createDate') });
    return '';
  });
  itemDeleteRoute(app, CommentParent, deleteCodeComment);

  await app.register(crudRoutes([replies]));
};
