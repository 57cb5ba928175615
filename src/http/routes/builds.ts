import { Readable } from 'node:stream';
import { Type, type TObject } from '@sinclair/typebox';
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
import { childList, childListRoutes, basicInfoQueryRoute, itemDeleteRoute, itemGetRoute } from '../resource-routes.js';
import { crudRoutes, type CrudResource } from '../crud.js';

const BuildId = Type.Object({ buildId: Type.Integer() });
const tags = ['Build'];
const BuildParent = { path: '/builds', idParam: 'buildId', tags };
const BuildLabelCreate = Type.Object({ buildId: Type.Integer(), specId: Type.Integer() }, { additionalProperties: false });

/** `/build-labels`: create and delete (docs/compatibility.md#builds-endpoints). */
const buildLabels: CrudResource<Parameters<typeof toWireBuildLabel>[0], typeof BuildLabelCreate, TObject> = {
  tag: 'Build Label',
  collection: '/build-labels',
  idParam: 'labelId',
  schema: BuildLabelSchema,
  toWire: toWireBuildLabel,
  create: { body: BuildLabelCreate, run: createBuildLabel },
  delete: deleteBuildLabel,
};

/** `/~api/builds` (docs/compatibility.md#builds-endpoints), and the build log. */
export const buildRoutes: FastifyPluginAsyncTypebox = async (app) => {
  itemGetRoute(app, BuildParent, 'Get Basic Info', BuildSchema, getBuild, toWireBuild);

  childListRoutes(app, BuildParent, [
    childList('labels', 'Get Labels', BuildLabelSchema, getBuildLabels, toWireBuildLabel),
    childList('params', 'Get Params', BuildParamSchema, getBuildParams, toWireBuildParam),
    childList('dependencies', 'Get Dependencies', BuildDependenceSchema, (ctx, id) => getBuildDependences(ctx, id, 'dependencies'), toWireBuildDependence),
    childList('dependents', 'Get Dependents', BuildDependenceSchema, (ctx, id) => getBuildDependences(ctx, id, 'dependents'), toWireBuildDependence),
    childList('fixed-issue-ids', 'Get Fixed Issue Ids', Type.Integer(), fixedIssueIds),
  ]);

  basicInfoQueryRoute(app, '/builds', tags, BuildSchema, queryBuilds, toWireBuild);

  itemDeleteRoute(app, BuildParent, deleteBuild);

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

  await app.register(crudRoutes([buildLabels]));
};
