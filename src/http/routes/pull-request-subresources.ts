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
  PullRequestReviewSchema,
  PullRequestWatchSchema,
  toWirePullRequestAssignment,
  toWirePullRequestComment,
  toWirePullRequestReview,
  toWirePullRequestWatch,
} from '../../wire/pulls.js';
import { crudRoutes, type CrudResource } from '../crud.js';
import { CreatedId, InputDate, inputDate } from '../schemas/common.js';

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

const comments: CrudResource<Parameters<typeof toWirePullRequestComment>[0], typeof CommentCreate, typeof CommentUpdate> = {
  tag: 'Pull Request Comment',
  collection: '/pull-request-comments',
  idParam: 'commentId',
  schema: PullRequestCommentSchema,
  toWire: toWirePullRequestComment,
  createBody: CommentCreate,
  updateBody: CommentUpdate,
  get: getComment,
  create: (ctx, body) => createComment(ctx, { ...body, date: inputDate(body.date, 'date') }),
  update: (ctx, id, body) => updateComment(ctx, id, { ...body, date: inputDate(body.date, 'date') }),
  delete: deleteComment,
};

const watches: CrudResource<Parameters<typeof toWirePullRequestWatch>[0], typeof WatchCreate, typeof WatchUpdate> = {
  tag: 'Pull Request Watch',
  collection: '/pull-request-watches',
  idParam: 'watchId',
  schema: PullRequestWatchSchema,
  toWire: toWirePullRequestWatch,
  createBody: WatchCreate,
  updateBody: WatchUpdate,
  get: getWatch,
  create: createWatch,
  update: updateWatch,
  delete: deleteWatch,
};

/**
 * The pull request sub-resources (docs/compatibility.md#gitloom-differs-additions-to-the-interface, docs/compatibility.md#pull-requests-sub-resources): reviews (get,
 * create, update), assignments (get, create, delete), labels (create, delete), and the standard
 * resources — comments and watches — through the CRUD factory.
 */
export const pullRequestSubresourceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(crudRoutes([comments, watches] as CrudResource<any, TObject, TObject>[]));

  const reviewTags = ['Pull Request Review'];
  const ReviewId = Type.Object({ reviewId: Type.Integer() });
  app.get(
    '/pull-request-reviews/:reviewId',
    { schema: { tags: reviewTags, summary: 'Get', params: ReviewId, response: { 200: PullRequestReviewSchema } } },
    async (request) => toWirePullRequestReview(await getReview(request.ctx, request.params.reviewId)),
  );
  app.post(
    '/pull-request-reviews',
    {
      schema: {
        tags: reviewTags,
        summary: 'Create',
        body: Type.Object(
          {
            requestId: ReviewFields.requestId,
            userId: Type.Optional(ReviewFields.userId),
            status: Type.Optional(ReviewStatusSchema),
            statusDate: Type.Optional(InputDate),
          },
          closed,
        ),
        response: { 200: CreatedId },
      },
    },
    async (request) => createReview(request.ctx, { ...request.body, statusDate: inputDate(request.body.statusDate, 'statusDate') }),
  );
  app.post(
    '/pull-request-reviews/:reviewId',
    {
      schema: { tags: reviewTags, summary: 'Update', params: ReviewId, body: Type.Partial(Type.Object(ReviewFields), closed) },
    },
    async (request) => {
      await updateReview(request.ctx, request.params.reviewId, { ...request.body, statusDate: inputDate(request.body.statusDate, 'statusDate') });
      return '';
    },
  );

  const assignmentTags = ['Pull Request Assignment'];
  const AssignmentId = Type.Object({ assignmentId: Type.Integer() });
  app.get(
    '/pull-request-assignments/:assignmentId',
    {
      schema: { tags: assignmentTags, summary: 'Get', params: AssignmentId, response: { 200: PullRequestAssignmentSchema } },
    },
    async (request) => toWirePullRequestAssignment(await getAssignment(request.ctx, request.params.assignmentId)),
  );
  app.post(
    '/pull-request-assignments',
    {
      schema: {
        tags: assignmentTags,
        summary: 'Create',
        body: Type.Object({ requestId: Type.Integer(), userId: Type.Integer() }, closed),
        response: { 200: CreatedId },
      },
    },
    async (request) => createAssignment(request.ctx, request.body),
  );
  app.delete('/pull-request-assignments/:assignmentId', { schema: { tags: assignmentTags, summary: 'Delete', params: AssignmentId } }, async (request) => {
    await deleteAssignment(request.ctx, request.params.assignmentId);
    return '';
  });

  const labelTags = ['Pull Request Label'];
  const LabelId = Type.Object({ labelId: Type.Integer() });
  app.post(
    '/pull-request-labels',
    {
      schema: {
        tags: labelTags,
        summary: 'Create',
        body: Type.Object({ requestId: Type.Integer(), specId: Type.Integer() }, closed),
        response: { 200: CreatedId },
      },
    },
    async (request) => createLabel(request.ctx, request.body),
  );
  app.delete('/pull-request-labels/:labelId', { schema: { tags: labelTags, summary: 'Delete', params: LabelId } }, async (request) => {
    await deleteLabel(request.ctx, request.params.labelId);
    return '';
  });
};
