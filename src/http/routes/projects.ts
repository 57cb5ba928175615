import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cloneUrls, createProject, deleteProject, getProject, type ProjectData, queryProjects, updateProject } from '../../domain/projects/index.js';
import { CloneUrlSchema, CodeAnalysisSettingSchema, GitPackConfigSchema, ProjectSchema, toWireProject } from '../../wire/projects.js';
import { basicInfoQueryRoute, itemDeleteRoute, itemGetRoute } from '../resource-routes.js';
import { CreatedId, InputDate, inputDate, Nullable } from '../schemas/common.js';

const ProjectId = Type.Object({ projectId: Type.Integer() });
const tags = ['Project'];
const ProjectParent = { path: '/projects', idParam: 'projectId', tags };

/** Project JSON as input: every field optional (partial merge on update). */
const ProjectBody = Type.Object(
  {
    name: Type.Optional(Type.String()),
    forkedFromId: Type.Optional(Nullable(Type.Integer())),
    parentId: Type.Optional(Nullable(Type.Integer())),
    description: Type.Optional(Nullable(Type.String())),
    createDate: Type.Optional(InputDate),
    defaultRoleId: Type.Optional(Nullable(Type.Integer())),
    codeManagement: Type.Optional(Type.Boolean()),
    issueManagement: Type.Optional(Type.Boolean()),
    gitPackConfig: Type.Optional(Type.Partial(GitPackConfigSchema)),
    codeAnalysisSetting: Type.Optional(Type.Partial(CodeAnalysisSettingSchema)),
  },
  { additionalProperties: false },
);

/**
 * The domain's input of a project body: `createDate` is accepted for compatibility
 * (docs/compatibility.md#projects-project-json) and checked, but a project's date is always the
 * moment it was created.
 */
function projectData(body: typeof ProjectBody.static): ProjectData {
  const { createDate, ...data } = body;
  inputDate(createDate, 'createDate');
  return data as ProjectData;
}

/** `/~api/projects` (docs/compatibility.md#projects-endpoints). */
export const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  itemGetRoute(app, ProjectParent, 'Get Basic Info', ProjectSchema, getProject, toWireProject);

  app.get(
    '/projects/:projectId/clone-url',
    { schema: { tags, summary: 'Get Clone URL', params: ProjectId, response: { 200: CloneUrlSchema } } },
    async (request) => cloneUrls(request.ctx, await getProject(request.ctx, request.params.projectId)),
  );

  app.get('/projects/:projectId/path', { schema: { tags, summary: 'Get Path', params: ProjectId } }, async (request, reply) =>
    reply.type('text/plain; charset=utf-8').send((await getProject(request.ctx, request.params.projectId)).path),
  );

  basicInfoQueryRoute(app, '/projects', tags, ProjectSchema, queryProjects, toWireProject);

  app.post('/projects', { schema: { tags, summary: 'Create', body: ProjectBody, response: { 200: CreatedId } } }, async (request) => {
    return createProject(request.ctx, projectData(request.body));
  });

  app.post('/projects/:projectId', { schema: { tags, summary: 'Update Basic Info', params: ProjectId, body: ProjectBody } }, async (request) => {
    await updateProject(request.ctx, request.params.projectId, projectData(request.body));
    return '';
  });

  itemDeleteRoute(app, ProjectParent, deleteProject);
};
