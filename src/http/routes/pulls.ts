import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
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
import {
  type ApiApp,
  childList,
  childListRoutes,
  basicInfoQueryRoute,
  itemActionRoutes,
  textAction,
  itemDeleteRoute,
  itemGetRoute,
} from '../resource-routes.js';
import { CreatedId, Nullable } from '../schemas/common.js';

const RequestId = Type.Object({ requestId: Type.Integer() });
const tags = ['Pull Request'];
const PullParent = { path: '/pulls', idParam: 'requestId', tags };

/** Get, the merge preview and the lists (docs/compatibility.md#pull-requests-endpoints). */
function pullRequestReadRoutes(app: ApiApp): void {
  itemGetRoute(app, PullParent, 'Get Basic Info', PullRequestSchema, getPullRequest, toWirePullRequest);

  childListRoutes(app, PullParent, [childList('labels', 'Get Labels', PullRequestLabelSchema, listLabels, toWirePullRequestLabel)]);

  app.get(
    '/pulls/:requestId/merge-preview',
    { schema: { tags, summary: 'Get Merge Preview', params: RequestId, response: { 200: MergePreviewSchema, 204: Type.Null() } } },
    async (request, reply) => {
      const preview = await getMergePreview(request.ctx, request.params.requestId);
      return preview ?? reply.code(204).send(null);
    },
  );

  childListRoutes(app, PullParent, [
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
  basicInfoQueryRoute(app, '/pulls', tags, PullRequestSchema, queryPullRequests, toWirePullRequest);

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
  itemActionRoutes(app, PullParent, [
    textAction('title', 'Set Title', setTitle),
    textAction('description', 'Set Description', setDescription),
    textAction('merge-strategy', 'Set Merge Strategy', (ctx, id, text) => setMergeStrategy(ctx, id, parseMergeStrategy(text))),
    textAction('reopen', 'Reopen', reopenPullRequest),
    textAction('discard', 'Discard', discardPullRequest),
    textAction('merge', 'Merge', mergePullRequest),
    textAction('delete-source-branch', 'Delete Source Branch', deleteSourceBranch),
    textAction('restore-source-branch', 'Restore Source Branch', restoreSourceBranch),
  ]);

  itemDeleteRoute(app, PullParent, deletePullRequest);
}

/** `/~api/pulls` (docs/compatibility.md#pull-requests-endpoints): the 22 pull request operations. */
export const pullRequestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  pullRequestReadRoutes(app);
  pullRequestQueryCreateRoutes(app);
  pullRequestActionRoutes(app);
};
