import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../../domain/context.js';
import {
  deletePullRequest,
  deleteSourceBranch,
  discardPullRequest,
  getMergePreview,
  getPullRequest,
  getPullRequestFixedIssueIds,
  getUpdates,
  listAssignments,
  listChanges,
  listComments,
  listLabels,
  listReviews,
  listWatches,
  mergePullRequest,
  openPullRequest,
  parseMergeStrategy,
  queryPullRequests,
  reopenPullRequest,
  restoreSourceBranch,
  setDescription,
  setMergeStrategy,
  setTitle,
} from '../../domain/pulls/index.js';
import { getCurrentBuilds } from '../../domain/builds/index.js';
import { BuildSchema, toWireBuild } from '../../wire/builds.js';
import {
  MergePreviewSchema,
  MergeStrategySchema,
  PullRequestAssignmentSchema,
  PullRequestChangeSchema,
  PullRequestCommentSchema,
  PullRequestLabelSchema,
  PullRequestReviewSchema,
  PullRequestSchema,
  PullRequestUpdateSchema,
  PullRequestWatchSchema,
  toWirePullRequest,
  toWirePullRequestAssignment,
  toWirePullRequestChange,
  toWirePullRequestComment,
  toWirePullRequestLabel,
  toWirePullRequestReview,
  toWirePullRequestUpdate,
  toWirePullRequestWatch,
} from '../../wire/pulls.js';
import { textBody } from '../../plugins/bodies.js';
import { CreatedId, Nullable, page, PageQuery, TextBody } from '../schemas/common.js';

const RequestId = Type.Object({ requestId: Type.Integer() });
const tags = ['Pull Request'];

/** `/~api/pulls` (docs/compatibility.md#pull-requests-endpoints): the 22 pull request operations. */
export const pullRequestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/pulls/:requestId', { schema: { tags, summary: 'Get Basic Info', params: RequestId, response: { 200: PullRequestSchema } } }, async (request) =>
    toWirePullRequest(await getPullRequest(request.ctx, request.params.requestId)),
  );

  app.get(
    '/pulls/:requestId/labels',
    { schema: { tags, summary: 'Get Labels', params: RequestId, response: { 200: Type.Array(PullRequestLabelSchema) } } },
    async (request) => (await listLabels(request.ctx, request.params.requestId)).map(toWirePullRequestLabel),
  );

  app.get(
    '/pulls/:requestId/merge-preview',
    { schema: { tags, summary: 'Get Merge Preview', params: RequestId, response: { 200: MergePreviewSchema, 204: Type.Null() } } },
    async (request, reply) => {
      const preview = await getMergePreview(request.ctx, request.params.requestId);
      return preview ?? reply.code(204).send(null);
    },
  );

  app.get(
    '/pulls/:requestId/assignments',
    { schema: { tags, summary: 'Get Assignments', params: RequestId, response: { 200: Type.Array(PullRequestAssignmentSchema) } } },
    async (request) => (await listAssignments(request.ctx, request.params.requestId)).map(toWirePullRequestAssignment),
  );

  app.get(
    '/pulls/:requestId/reviews',
    { schema: { tags, summary: 'Get Reviews', params: RequestId, response: { 200: Type.Array(PullRequestReviewSchema) } } },
    async (request) => (await listReviews(request.ctx, request.params.requestId)).map(toWirePullRequestReview),
  );

  app.get(
    '/pulls/:requestId/comments',
    { schema: { tags, summary: 'Get Comments', params: RequestId, response: { 200: Type.Array(PullRequestCommentSchema) } } },
    async (request) => (await listComments(request.ctx, request.params.requestId)).map(toWirePullRequestComment),
  );

  app.get(
    '/pulls/:requestId/watches',
    { schema: { tags, summary: 'Get Watches', params: RequestId, response: { 200: Type.Array(PullRequestWatchSchema) } } },
    async (request) => (await listWatches(request.ctx, request.params.requestId)).map(toWirePullRequestWatch),
  );

  app.get(
    '/pulls/:requestId/updates',
    { schema: { tags, summary: 'Get Updates', params: RequestId, response: { 200: Type.Array(PullRequestUpdateSchema) } } },
    async (request) => (await getUpdates(request.ctx, request.params.requestId)).map(toWirePullRequestUpdate),
  );

  app.get(
    '/pulls/:requestId/current-builds',
    { schema: { tags, summary: 'Get Current Builds', params: RequestId, response: { 200: Type.Array(BuildSchema) } } },
    async (request) => (await getCurrentBuilds(request.ctx, request.params.requestId)).map(toWireBuild),
  );

  app.get(
    '/pulls/:requestId/changes',
    { schema: { tags, summary: 'Get Changes', params: RequestId, response: { 200: Type.Array(PullRequestChangeSchema) } } },
    async (request) => (await listChanges(request.ctx, request.params.requestId)).map(toWirePullRequestChange),
  );

  app.get(
    '/pulls/:requestId/fixed-issue-ids',
    { schema: { tags, summary: 'Get Fixed Issue Ids', params: RequestId, response: { 200: Type.Array(Type.Integer()) } } },
    async (request) => getPullRequestFixedIssueIds(request.ctx, request.params.requestId),
  );

  app.get(
    '/pulls',
    {
      schema: {
        tags,
        summary: 'Query Basic Info',
        querystring: Type.Object({ query: Type.Optional(Type.String()), ...PageQuery }),
        response: { 200: Type.Array(PullRequestSchema) },
      },
    },
    async (request) => {
      const { offset, count } = page(request.query);
      return (await queryPullRequests(request.ctx, request.query.query ?? '', offset, count)).map(toWirePullRequest);
    },
  );

  app.post(
    '/pulls',
    {
      schema: {
        tags,
        summary: 'Create',
        body: Type.Object(
          {
            targetProjectId: Type.Integer(),
            sourceProjectId: Type.Integer(),
            targetBranch: Type.String(),
            sourceBranch: Type.String(),
            title: Type.String(),
            description: Type.Optional(Nullable(Type.String())),
            mergeStrategy: Type.Optional(MergeStrategySchema),
            reviewerIds: Type.Optional(Type.Array(Type.Integer())),
            assigneeIds: Type.Optional(Type.Array(Type.Integer())),
          },
          { additionalProperties: false },
        ),
        response: { 200: CreatedId },
      },
    },
    async (request) => openPullRequest(request.ctx, request.body),
  );

  const textAction = (path: string, summary: string, action: (ctx: Context, id: number, text: string) => Promise<void>) =>
    app.post(path, { config: { textBody: true }, schema: { tags, summary, params: RequestId, body: TextBody } }, async (request) => {
      await action(request.ctx, request.params.requestId, textBody(request.body));
      return '';
    });

  textAction('/pulls/:requestId/title', 'Set Title', setTitle);
  textAction('/pulls/:requestId/description', 'Set Description', setDescription);
  textAction('/pulls/:requestId/merge-strategy', 'Set Merge Strategy', (ctx, id, text) => setMergeStrategy(ctx, id, parseMergeStrategy(text)));
  textAction('/pulls/:requestId/reopen', 'Reopen', reopenPullRequest);
  textAction('/pulls/:requestId/discard', 'Discard', discardPullRequest);
  textAction('/pulls/:requestId/merge', 'Merge', mergePullRequest);
  textAction('/pulls/:requestId/delete-source-branch', 'Delete Source Branch', deleteSourceBranch);
  textAction('/pulls/:requestId/restore-source-branch', 'Restore Source Branch', restoreSourceBranch);

  app.delete('/pulls/:requestId', { schema: { tags, summary: 'Delete', params: RequestId } }, async (request) => {
    await deletePullRequest(request.ctx, request.params.requestId);
    return '';
  });
};
