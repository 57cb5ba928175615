import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.js';
import { projectRoutes } from './projects.js';
import { pullRequestRoutes } from './pulls.js';
import { settingRoutes } from './settings.js';
import { userRoutes } from './users.js';

/** Every REST resource module, mounted under `/~api`. */
export const apiRoutes: FastifyPluginAsync<{ services: Services }> = async (api) => {
  await api.register(userRoutes);
  await api.register(projectRoutes);
  await api.register(pullRequestRoutes);
  await api.register(settingRoutes);
};
