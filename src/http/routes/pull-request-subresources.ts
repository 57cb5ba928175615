import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createAssignment, deleteAssignment, getAssignment } from '../../domain/pulls/assignments.js';
import { createComment, deleteComment, getComment, updateComment } from '../../domain/pulls/comments.js';
import { createLabel, deleteLabel } from '../../domain/pulls/labels.js';
import { createReview, getReview, updateReview } from '../../domain/pulls/reviews.js';
import { createWatch, deleteWatch, getWatch, updateWatch } from '../../domain/pulls/watches.js';
import {
  PullRequestAssignmentSchema, PullRequestCommentSchema, PullRequestReviewSchema, PullRequestWatchSchema,
  toWirePullRequestAssignment, toWirePullRequestComment, toWirePullRequestReview, toWirePullRequestWatch,
} from '../../wire/pulls.js';
import { crudRoutes } from '../crud.js';
import { CreatedId, InputDate } from '../schemas/common.js';

const ReviewStatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REQUESTED_FOR_CHANGES'), Type.Literal('EXCLUDED')]);
const ReviewFields = { requestId: Type.Integer(), userId: Type.Integer(), status: ReviewStatusSchema, statusDate: InputDate };
const CommentFields = { requestId: Type.Integer(), userId: Type.Integer(), content: Type.String(), date: InputDate };
const WatchFields = { requestId: Type.Integer(), userId: Type.Integer(), watching: Type.Boolean() };
const closed = { additionalProperties: false } as const;

/**
 * The pull request sub-resources (docs/compatibility.md#gitloom-differs-additions-to-the-interface, docs/compatibility.md#pull-requests-sub-resources): reviews (get,
 * create, update), assignments (get, create, delete), labels (create, delete), and the standard
 * resources — comments and watches — through the CRUD factory.
 */
export const pullRequestSubresourceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(crudRoutes([
    {
      tag: 'Pull Request Comment', collection: '/pull-request-comments', idParam: 'commentId', schema: PullRequestCommentSchema,
      toWire: toWirePullRequestComment,
      createBody: Type.Object({ ...CommentFields, userId: Type.Optional(CommentFields.userId), date: Type.Optional(InputDate) }, closed),
      updateBody: Type.Partial(Type.Object(CommentFields), closed),
      get: getComment, create: createComment, update: updateComment, delete: deleteComment,
    },
    {
      tag: 'Pull Request Watch', collection: '/pull-request-watches', idParam: 'watchId', schema: PullRequestWatchSchema,
      toWire: toWirePullRequestWatch,
      createBody: Type.Object({ requestId: WatchFields.requestId, userId: Type.Optional(WatchFields.userId), watching: Type.Optional(WatchFields.watching) }, closed),
      updateBody: Type.Partial(Type.Object(WatchFields), closed),
      get: getWatch, create: createWatch, update: updateWatch, delete: deleteWatch,
    },
  ]));

  const reviewTags = ['Pull Request Review'];
  const ReviewId = Type.Object({ reviewId: Type.Integer() });
  app.get('/pull-request-reviews/:reviewId', { schema: { tags: reviewTags, summary: 'Get', params: ReviewId, response: { 200: PullRequestReviewSchema } } },
    async (request) => toWirePullRequestReview(await getReview(request.ctx, request.params.reviewId)));
  app.post('/pull-request-reviews', {
    schema: {
      tags: reviewTags, summary: 'Create',
      body: Type.Object({ requestId: ReviewFields.requestId, userId: Type.Optional(ReviewFields.userId), status: Type.Optional(ReviewStatusSchema), statusDate: Type.Optional(InputDate) }, closed),
      response: { 200: CreatedId },
    },
  }, async (request) => createReview(request.ctx, request.body));
  app.post('/pull-request-reviews/:reviewId', {
    schema: { tags: reviewTags, summary: 'Update', params: ReviewId, body: Type.Partial(Type.Object(ReviewFields), closed) },
  }, async (request) => {
    await updateReview(request.ctx, request.params.reviewId, request.body);
    return '';
  });

  const assignmentTags = ['Pull Request Assignment'];
  const AssignmentId = Type.Object({ assignmentId: Type.Integer() });
  app.get('/pull-request-assignments/:assignmentId', {
    schema: { tags: assignmentTags, summary: 'Get', params: AssignmentId, response: { 200: PullRequestAssignmentSchema } },
  }, async (request) => toWirePullRequestAssignment(await getAssignment(request.ctx, request.params.assignmentId)));
  app.post('/pull-request-assignments', {
    schema: { tags: assignmentTags, summary: 'Create', body: Type.Object({ requestId: Type.Integer(), userId: Type.Integer() }, closed), response: { 200: CreatedId } },
  }, async (request) => createAssignment(request.ctx, request.body));
  app.delete('/pull-request-assignments/:assignmentId', { schema: { tags: assignmentTags, summary: 'Delete', params: AssignmentId } }, async (request) => {
    await deleteAssignment(request.ctx, request.params.assignmentId);
    return '';
  });

  const labelTags = ['Pull Request Label'];
  const LabelId = Type.Object({ labelId: Type.Integer() });
  app.post('/pull-request-labels', {
    schema: { tags: labelTags, summary: 'Create', body: Type.Object({ requestId: Type.Integer(), specId: Type.Integer() }, closed), response: { 200: CreatedId } },
  }, async (request) => createLabel(request.ctx, request.body));
  app.delete('/pull-request-labels/:labelId', { schema: { tags: labelTags, summary: 'Delete', params: LabelId } }, async (request) => {
    await deleteLabel(request.ctx, request.params.labelId);
    return '';
  });
};
