import { Type, type TObject } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createIssueComment,
  createIssueVote,
  createIssueWatch,
  deleteIssueComment,
  deleteIssueVote,
  deleteIssueWatch,
  getIssueComment,
  getIssueVote,
  getIssueWatch,
  updateIssueComment,
  updateIssueWatch,
} from '../../domain/issues/index.js';
import { IssueCommentSchema, IssueVoteSchema, IssueWatchSchema, toWireIssueComment, toWireIssueVote, toWireIssueWatch } from '../../wire/issues.js';
import { crudRoutes, type CrudResource } from '../crud.js';
import { InputDate, inputDate } from '../schemas/common.js';

const CommentBody = { issueId: Type.Integer(), userId: Type.Integer(), content: Type.String(), date: InputDate };
const WatchBody = { issueId: Type.Integer(), userId: Type.Integer(), watching: Type.Boolean() };
const VoteBody = Type.Object(
  { issueId: Type.Integer(), userId: Type.Optional(Type.Integer()), date: Type.Optional(InputDate) },
  { additionalProperties: false },
);

const CommentCreate = Type.Object(
  { ...CommentBody, userId: Type.Optional(CommentBody.userId), date: Type.Optional(InputDate) },
  { additionalProperties: false },
);
const CommentUpdate = Type.Partial(Type.Object(CommentBody, { additionalProperties: false }));
const WatchCreate = Type.Object({ ...WatchBody, userId: Type.Optional(WatchBody.userId) }, { additionalProperties: false });
const WatchUpdate = Type.Partial(Type.Object(WatchBody, { additionalProperties: false }));

const comments: CrudResource<Parameters<typeof toWireIssueComment>[0], typeof CommentCreate, typeof CommentUpdate> = {
  tag: 'Issue Comment',
  collection: '/issue-comments',
  idParam: 'commentId',
  schema: IssueCommentSchema,
  toWire: toWireIssueComment,
  get: getIssueComment,
  create: { body: CommentCreate, run: (ctx, body) => createIssueComment(ctx, { ...body, date: inputDate(body.date, 'date') }) },
  update: { body: CommentUpdate, run: (ctx, id, body) => updateIssueComment(ctx, id, { ...body, date: inputDate(body.date, 'date') }) },
  delete: deleteIssueComment,
};

const watches: CrudResource<Parameters<typeof toWireIssueWatch>[0], typeof WatchCreate, typeof WatchUpdate> = {
  tag: 'Issue Watch',
  collection: '/issue-watches',
  idParam: 'watchId',
  schema: IssueWatchSchema,
  toWire: toWireIssueWatch,
  get: getIssueWatch,
  create: { body: WatchCreate, run: createIssueWatch },
  update: { body: WatchUpdate, run: updateIssueWatch },
  delete: deleteIssueWatch,
};

const votes: CrudResource<Parameters<typeof toWireIssueVote>[0], typeof VoteBody, TObject> = {
  tag: 'Issue Vote',
  collection: '/issue-votes',
  idParam: 'voteId',
  schema: IssueVoteSchema,
  toWire: toWireIssueVote,
  get: getIssueVote,
  create: { body: VoteBody, run: (ctx, body) => createIssueVote(ctx, { ...body, date: inputDate(body.date, 'date') }) },
  delete: deleteIssueVote,
};

/** `/~api/issue-comments`, `/issue-watches` (docs/compatibility.md#issue-watches-and-votes) and `/issue-votes` (docs/compatibility.md#gitloom-differs-additions-to-the-interface; docs/compatibility.md#issue-comments, docs/compatibility.md#issue-watches-and-votes). */
export const issueCommentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(crudRoutes([comments, watches, votes] as CrudResource<any, TObject, TObject>[]));
};
