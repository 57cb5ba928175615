import { Type, type TObject } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createAssignment,
  createComment,
  createLabel,
  createReview,
  createWatch,
  deleteAssignment,
  deleteComment,
  deleteLabel,
  deleteWatch,
  getAssignment,
  getComment,
  getReview,
  getWatch,
  updateComment,
  updateReview,
  updateWatch,
} from '../../domain/pulls/index.js';
import {
  PullRequestAssignmentSchema,
  PullRequestCommentSchema,
  PullRequestLabelSchema,
  PullRequestReviewSchema,
  PullRequestWatchSchema,
  toWirePullRequestAssignment,
  toWirePullRequestComment,
  toWirePullRequestLabel,
  toWirePullRequestReview,
  toWirePullRequestWatch,
} from '../../wire/pulls.js';
import { crudRoutes, type CrudResource } from '../crud.js';
import { InputDate, inputDate } from '../schemas/common.js';

const ReviewStatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REQUESTED_FOR_CHANGES'), Type.Literal('EXCLUDED')]);
const ReviewFields = { requestId: Type.Integer(), userId: Type.Integer(), status: ReviewStatusSchema, statusDate: InputDate };
const CommentFields = { requestId: Type.Integer(), userId: Type.Integer(), content: Type.String(), date: InputDate };
const WatchFields = { requestId: Type.Integer(), userId: Type.Integer(), watching: Type.Boolean() };
const closed = { additionalProperties: false } as const;

const CommentCreate = Type.Object({ ...CommentFields, userId: Type.Optional(CommentFields.userId), date: Type.Optional(InputDate) }, closed);
const CommentUpdate = Type.Partial(Type.Object(CommentFields), closed);
const WatchCreate = Type.Object(
  { requestId: WatchFields.requestId, userId: Type.Optional(WatchFields.userId), watching: Type.Optional(WatchFields.watching) },
  closed,
);
const WatchUpdate = Type.Partial(Type.Object(WatchFields), closed);
const ReviewCreate = Type.Object(
  {
    requestId: ReviewFields.requestId,
    userId: Type.Optional(ReviewFields.userId),
    status: Type.Optional(ReviewStatusSchema),
    statusDate: Type.Optional(InputDate),
  },
  closed,
);
const ReviewUpdate = Type.Partial(Type.Object(ReviewFields), closed);
const AssignmentCreate = Type.Object({ requestId: Type.Integer(), userId: Type.Integer() }, closed);
const LabelCreate = Type.Object({ requestId: Type.Integer(), specId: Type.Integer() }, closed);

const comments: CrudResource<Parameters<typeof toWirePullRequestComment>[0], typeof CommentCreate, typeof CommentUpdate> = {
  tag: 'Pull Request Comment',
  collection: '/pull-request-comments',
  idParam: 'commentId',
  schema: PullRequestCommentSchema,
  toWire: toWirePullRequestComment,
  get: getComment,
  create: { body: CommentCreate, run: (ctx, body) => createComment(ctx, { ...body, date: inputDate(body.date, 'date') }) },
  update: { body: CommentUpdate, run: (ctx, id, body) => updateComment(ctx, id, { ...body, date: inputDate(body.date, 'date') }) },
  delete: deleteComment,
};

const watches: CrudResource<Parameters<typeof toWirePullRequestWatch>[0], typeof WatchCreate, typeof WatchUpdate> = {
  tag: 'Pull Request Watch',
  collection: '/pull-request-watches',
  idParam: 'watchId',
  schema: PullRequestWatchSchema,
  toWire: toWirePullRequestWatch,
  get: getWatch,
  create: { body: WatchCreate, run: createWatch },
  update: { body: WatchUpdate, run: updateWatch },
  delete: deleteWatch,
};

const reviews: CrudResource<Parameters<typeof toWirePullRequestReview>[0], typeof ReviewCreate, typeof ReviewUpdate> = {
  tag: 'Pull Request Review',
  collection: '/pull-request-reviews',
  idParam: 'reviewId',
  schema: PullRequestReviewSchema,
  toWire: toWirePullRequestReview,
  get: getReview,
  create: { body: ReviewCreate, run: (ctx, body) => createReview(ctx, { ...body, statusDate: inputDate(body.statusDate, 'statusDate') }) },
  update: { body: ReviewUpdate, run: (ctx, id, body) => updateReview(ctx, id, { ...body, statusDate: inputDate(body.statusDate, 'statusDate') }) },
};

const assignments: CrudResource<Parameters<typeof toWirePullRequestAssignment>[0], typeof AssignmentCreate, TObject> = {
  tag: 'Pull Request Assignment',
  collection: '/pull-request-assignments',
  idParam: 'assignmentId',
  schema: PullRequestAssignmentSchema,
  toWire: toWirePullRequestAssignment,
  get: getAssignment,
  create: { body: AssignmentCreate, run: createAssignment },
  delete: deleteAssignment,
};

const labels: CrudResource<Parameters<typeof toWirePullRequestLabel>[0], typeof LabelCreate, TObject> = {
  tag: 'Pull Request Label',
  collection: '/pull-request-labels',
  idParam: 'labelId',
  schema: PullRequestLabelSchema,
  toWire: toWirePullRequestLabel,
  create: { body: LabelCreate, run: createLabel },
  delete: deleteLabel,
};

/**
 * The pull request sub-resources (docs/compatibility.md#gitloom-differs-additions-to-the-interface, docs/compatibility.md#pull-requests-sub-resources), all
 * through the CRUD factory: comments and watches (the standard resources), reviews (get, create,
 * update), assignments (get, create, delete) and labels (create, delete).
 */
export const pullRequestSubresourceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(crudRoutes([comments, watches, reviews, assignments, labels] as CrudResource<any, TObject, TObject>[]));
};
