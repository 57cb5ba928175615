import { Type } from '@sinclair/typebox';
import { TextBody } from '../schemas/common.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getRepositoryBranches, getRepositoryDefaultBranch, setRepositoryDefaultBranch } from '../../domain/projects/repository-branches.js';
import { textBody } from '../plugins/bodies.js';

const ProjectId = Type.Object({ projectId: Type.Integer() });
const tags = ['Repository'];
const BranchSchema = Type.Object({ name: Type.String(), commitHash: Type.String() });

/** `/repositories/{projectId}/…` (reference/projects.md §7, CONTRACT.md §9): default branch and branches. */
export const repositoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/repositories/:projectId/default-branch', { schema: { tags, summary: 'Get Default Branch', params: ProjectId } }, async (request, reply) => {
    const branch = await getRepositoryDefaultBranch(request.ctx, request.params.projectId);
    if (branch === null) return reply.code(204).send();
    return reply.type('text/plain; charset=utf-8').send(branch);
  });

  app.post('/repositories/:projectId/default-branch', {
    config: { textBody: true },
    schema: { tags, summary: 'Set Default Branch', params: ProjectId, body: TextBody },
  }, async (request) => {
    await setRepositoryDefaultBranch(request.ctx, request.params.projectId, textBody(request.body).trim());
    return '';
  });

  app.get('/repositories/:projectId/branches', { schema: { tags, summary: 'Get Branches', params: ProjectId, response: { 200: Type.Array(BranchSchema) } } },
    async (request) => getRepositoryBranches(request.ctx, request.params.projectId));
};
