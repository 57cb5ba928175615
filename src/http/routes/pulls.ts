import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { mergePullRequest } from '../../domain/pulls/merge.js';
import { getMergePreview } from '../../domain/pulls/merge-preview.js';
import { getPullRequest, listUpdates, loadReadablePullRequest, openPullRequest } from '../../domain/pulls/pull-requests.js';
import { queryPullRequests } from '../../domain/pulls/pull-request-query.js';
import {
  MergePreviewSchema, MergeStrategySchema, PullRequestSchema, PullRequestUpdateSchema, toWirePullRequest, toWirePullRequestUpdate,
} from '../../wire/pulls.js';
import { textBody } from '../plugins/bodies.js';
import { CreatedId, Nullable, page, PageQuery } from '../schemas/common.js';

const RequestId = Type.Object({ requestId: Type.Integer() });
const tags = ['Pull Request'];

/** `/~api/pulls` (seed §4.2, reference/pulls.md §1). */
export const pullRequestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/pulls/:requestId', { schema: { tags, summary: 'Get Basic Info', params: RequestId, response: { 200: PullRequestSchema } } },
    async (request) => toWirePullRequest(await getPullRequest(request.ctx, request.params.requestId)));

  app.get('/pulls', {
    schema: { tags, summary: 'Query Basic Info', querystring: Type.Object({ query: Type.Optional(Type.String()), ...PageQuery }), response: { 200: Type.Array(PullRequestSchema) } },
  }, async (request) => {
    const { offset, count } = page(request.query);
    return (await queryPullRequests(request.ctx, request.query.query ?? '', offset, count)).map(toWirePullRequest);
  });

  app.post('/pulls', {
    schema: {
      tags, summary: 'Create',
      body: Type.Object({
        targetProjectId: Type.Integer(), sourceProjectId: Type.Integer(), targetBranch: Type.String(), sourceBranch: Type.String(),
        title: Type.String(), description: Type.Optional(Nullable(Type.String())), mergeStrategy: Type.Optional(MergeStrategySchema),
        reviewerIds: Type.Optional(Type.Array(Type.Integer())), assigneeIds: Type.Optional(Type.Array(Type.Integer())),
      }, { additionalProperties: false }),
      response: { 200: CreatedId },
    },
  }, async (request) => openPullRequest(request.ctx, request.body));

  app.get('/pulls/:requestId/merge-preview', { schema: { tags, summary: 'Get Merge Preview', params: RequestId, response: { 200: MergePreviewSchema, 204: Type.Null() } } },
    async (request, reply) => {
      const preview = await getMergePreview(request.ctx, request.params.requestId);
      return preview ?? reply.code(204).send(null);
    });

  app.get('/pulls/:requestId/updates', { schema: { tags, summary: 'Get Updates', params: RequestId, response: { 200: Type.Array(PullRequestUpdateSchema) } } },
    async (request) => {
      const pr = await loadReadablePullRequest(request.ctx, request.params.requestId);
      return (await listUpdates(request.ctx.db, pr.id)).map(toWirePullRequestUpdate);
    });

  app.post('/pulls/:requestId/merge', { config: { textBody: true }, schema: { tags, summary: 'Merge', params: RequestId, body: Type.Optional(Type.String()) } },
    async (request) => {
      await mergePullRequest(request.ctx, request.params.requestId, textBody(request.body));
      return '';
    });
};
