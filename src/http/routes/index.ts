import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.js';
import { accessRoutes } from './access.js';
import { labelMilestoneRoutes } from './labels-milestones.js';
import { projectExtraRoutes } from './project-extras.js';
import { projectRoutes } from './projects.js';
import { pullRequestRoutes } from './pulls.js';
import { repositoryRoutes } from './repositories.js';
import { settingRoutes } from './settings.js';
import { userListRoutes } from './user-lists.js';
import { userRoutes } from './users.js';

/** Every REST resource module, mounted under `/~api`. */
export const apiRoutes: FastifyPluginAsync<{ services: Services }> = async (api) => {
  await api.register(userRoutes);
  await api.register(projectRoutes);
  await api.register(accessRoutes);
  await api.register(projectExtraRoutes);
  await api.register(labelMilestoneRoutes);
  await api.register(repositoryRoutes);
  await api.register(userListRoutes);
  await api.register(pullRequestRoutes);
  await api.register(settingRoutes);
};
