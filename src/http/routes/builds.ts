import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  buildLog,
  createBuildLabel,
  deleteBuild,
  deleteBuildLabel,
  fixedIssueIds,
  getBuild,
  getBuildDependences,
  getBuildLabels,
  getBuildParams,
  queryBuilds,
} from '../../domain/builds/index.js';
import {
  BuildDependenceSchema,
  BuildLabelSchema,
  BuildParamSchema,
  BuildSchema,
  toWireBuild,
  toWireBuildDependence,
  toWireBuildLabel,
  toWireBuildParam,
} from '../../wire/builds.js';
import { CreatedId, page, PageQuery } from '../schemas/common.js';

const BuildId = Type.Object({ buildId: Type.Integer() });
const tags = ['Build'];

/** `/~api/builds` (docs/compatibility.md#builds-endpoints), and the build log. */
export const buildRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/builds/:buildId', { schema: { tags, summary: 'Get Basic Info', params: BuildId, response: { 200: BuildSchema } } }, async (request) =>
    toWireBuild(await getBuild(request.ctx, request.params.buildId)),
  );

  app.get(
    '/builds/:buildId/labels',
    { schema: { tags, summary: 'Get Labels', params: BuildId, response: { 200: Type.Array(BuildLabelSchema) } } },
    async (request) => (await getBuildLabels(request.ctx, request.params.buildId)).map(toWireBuildLabel),
  );

  app.get(
    '/builds/:buildId/params',
    { schema: { tags, summary: 'Get Params', params: BuildId, response: { 200: Type.Array(BuildParamSchema) } } },
    async (request) => (await getBuildParams(request.ctx, request.params.buildId)).map(toWireBuildParam),
  );

  app.get(
    '/builds/:buildId/dependencies',
    { schema: { tags, summary: 'Get Dependencies', params: BuildId, response: { 200: Type.Array(BuildDependenceSchema) } } },
    async (request) => (await getBuildDependences(request.ctx, request.params.buildId, 'dependencies')).map(toWireBuildDependence),
  );

  app.get(
    '/builds/:buildId/dependents',
    { schema: { tags, summary: 'Get Dependents', params: BuildId, response: { 200: Type.Array(BuildDependenceSchema) } } },
    async (request) => (await getBuildDependences(request.ctx, request.params.buildId, 'dependents')).map(toWireBuildDependence),
  );

  app.get(
    '/builds/:buildId/fixed-issue-ids',
    { schema: { tags, summary: 'Get Fixed Issue Ids', params: BuildId, response: { 200: Type.Array(Type.Integer()) } } },
    async (request) => fixedIssueIds(request.ctx, request.params.buildId),
  );

  app.get(
    '/builds',
    {
      schema: {
        tags,
        summary: 'Query Basic Info',
        querystring: Type.Object({ query: Type.Optional(Type.String()), ...PageQuery }),
        response: { 200: Type.Array(BuildSchema) },
      },
    },
    async (request) => {
      const { offset, count } = page(request.query);
      return (await queryBuilds(request.ctx, request.query.query ?? '', offset, count)).map(toWireBuild);
    },
  );

  app.delete('/builds/:buildId', { schema: { tags, summary: 'Delete', params: BuildId } }, async (request) => {
    await deleteBuild(request.ctx, request.params.buildId);
    return '';
  });

  app.get(
    '/builds/:buildId/log',
    {
      schema: {
        tags,
        summary: 'Get Log (text; follow=true streams until the build finishes)',
        params: BuildId,
        querystring: Type.Object({ follow: Type.Optional(Type.Boolean()) }),
      },
    },
    async (request, reply) => {
      const chunks = await buildLog(request.ctx, request.params.buildId, request.query.follow === true);
      reply.header('content-type', 'text/plain; charset=utf-8');
      return reply.send(Readable.from(chunks));
    },
  );

  const labelTags = ['Build Label'];
  app.post(
    '/build-labels',
    {
      schema: {
        tags: labelTags,
        summary: 'Create',
        body: Type.Object({ buildId: Type.Integer(), specId: Type.Integer() }, { additionalProperties: false }),
        response: { 200: CreatedId },
      },
    },
    async (request) => createBuildLabel(request.ctx, request.body),
  );
  app.delete(
    '/build-labels/:labelId',
    { schema: { tags: labelTags, summary: 'Delete', params: Type.Object({ labelId: Type.Integer() }) } },
    async (request) => {
      await deleteBuildLabel(request.ctx, request.params.labelId);
      return '';
    },
  );
};
