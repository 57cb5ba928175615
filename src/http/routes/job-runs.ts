import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cancelBuild, rebuild, runJob } from '../../domain/builds/index.js';
import { CreatedId } from '../schemas/common.js';

const tags = ['Job Run'];
const Params = Type.Optional(Type.Record(Type.String(), Type.Array(Type.String())));
const JobRunOnCommit = Type.Object(
  {
    '@type': Type.Literal('JobRunOnCommit'),
    projectId: Type.Integer(),
    commitHash: Type.String(),
    refName: Type.String(),
    jobName: Type.String(),
    params: Params,
    reason: Type.String(),
  },
  { additionalProperties: false },
);
const JobRunOnPullRequest = Type.Object(
  {
    '@type': Type.Literal('JobRunOnPullRequest'),
    pullRequestId: Type.Integer(),
    jobName: Type.String(),
    params: Params,
    reason: Type.String(),
  },
  { additionalProperties: false },
);

/** `/~api/job-runs` (docs/compatibility.md#builds-creating-builds, docs/compatibility.md#gitloom-differs-additions-to-the-interface): run, rebuild, cancel. */
export const jobRunRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/job-runs',
    {
      schema: { tags, summary: 'Run Build', body: Type.Union([JobRunOnCommit, JobRunOnPullRequest]), response: { 200: CreatedId } },
    },
    async (request) => runJob(request.ctx, request.body),
  );

  app.post(
    '/job-runs/rebuild',
    {
      schema: { tags, summary: 'Rebuild', body: Type.Object({ buildId: Type.Integer(), reason: Type.String() }, { additionalProperties: false }) },
    },
    async (request) => {
      await rebuild(request.ctx, request.body.buildId, request.body.reason);
      return '';
    },
  );

  app.delete('/job-runs/:buildId', { schema: { tags, summary: 'Cancel Build', params: Type.Object({ buildId: Type.Integer() }) } }, async (request) => {
    await cancelBuild(request.ctx, request.params.buildId);
    return '';
  });
};
