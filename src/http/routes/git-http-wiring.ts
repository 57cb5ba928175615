import type { FastifyPluginAsync } from 'fastify';
import { authorizeRepository } from '../../domain/projects/repository-access.js';
import type { Services } from '../../services.js';
import { gitHttpPlugin } from './git-http.js';

/**
 * Mounts git smart HTTP at `/<project path>[.git]`: the caller resolved by the auth plugin is
 * authorized per project, and pushed ref changes become `refsUpdated` events.
 */
export const gitHttpRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  await app.register(gitHttpPlugin, {
    resolveRepository: (request, projectPath, access) => authorizeRepository(request.ctx, projectPath, access),
    onRefsUpdated: (projectId, changes) => {
      services.events.emit('refsUpdated', { projectId, changes, userId: null });
    },
  });
};
