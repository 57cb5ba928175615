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
import { type ApiApp, childList, childListRoutes } from '../child-lists.js';
import { CreatedId, Nullable, page, PageQuery, TextBody } from '../schemas/common.js';

const RequestId = Type.Object({ requestId: Type.Integer() });
const tags = ['Pull Request'];

/** Get, the merge preview and the lists (docs/compatibility.md#pull-requests-endpoints). */
function pullRequestReadRoutes(app: ApiApp): void {
  const parent = { path: '/pulls', idParam: 'requestId', tags };
  app.get('/pulls/:requestId', { schema: { tags, summary: 'Get Basic Info', params: RequestId, response: { 200: PullRequestSchema } } }, async (request) =>
    toWirePullRequest(await getPullRequest(request.ctx, request.params.requestId)),
  );

  childListRoutes(app, parent, [childList('labels', 'Get Labels', PullRequestLabelSchema, listLabels, toWirePullRequestLabel)]);

  app.get(
    '/pulls/:requestId/merge-preview',
    { schema: { tags, summary: 'Get Merge Preview', params: RequestId, response: { 200: MergePreviewSchema, 204: Type.Null() } } },
    async (request, reply) => {
      const preview = await getMergePreview(request.ctx, request.params.requestId);
      return preview ?? reply.code(204).send(null);
    },
  );

  childListRoutes(app, parent, [
    childList('assignments', 'Get Assignments', PullRequestAssignmentSchema, listAssignments, toWirePullRequestAssignment),
    childList('reviews', 'Get Reviews', PullRequestReviewSchema, listReviews, toWirePullRequestReview),
    childList('comments', 'Get Comments', PullRequestCommentSchema, listComments, toWirePullRequestComment),
    childList('watches', 'Get Watches', PullRequestWatchSchema, listWatches, toWirePullRequestWatch),
    childList('updates', 'Get Updates', PullRequestUpdateSchema, getUpdates, toWirePullRequestUpdate),
    childList('current-builds', 'Get Current Builds', BuildSchema, getCurrentBuilds, toWireBuild),
    childList('changes', 'Get Changes', PullRequestChangeSchema, listChanges, toWirePullRequestChange),
    childList('fixed-issue-ids', 'Get Fixed Issue Ids', Type.Integer(), getPullRequestFixedIssueIds),
  ]);
}

/** Query and create (docs/compatibility.md#pull-requests-endpoints). */
function pullRequestQueryCreateRoutes(app: ApiApp): void {
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
}

/** The text-bodied setters and state changes, and delete (docs/compatibility.md#pull-requests-endpoints). */
function pullRequestActionRoutes(app: ApiApp): void {
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
}

/** `/~api/pulls` (docs/compatibility.md#pull-requests-endpoints): the 22 pull request operations. */
export const pullRequestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  pullRequestReadRoutes(app);
  pullRequestQueryCreateRoutes(app);
  pullRequestActionRoutes(app);
};
