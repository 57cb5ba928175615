import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  getProjectSetting,
  projectForks,
  projectGroupAuthorizations,
  projectLabels,
  projectUserAuthorizations,
  queryMilestones,
  topContributors,
  updateProjectSetting,
} from '../../domain/projects/index.js';
import {
  GitContributorSchema,
  GroupAuthorizationSchema,
  MilestoneSchema,
  ProjectLabelSchema,
  toWireGroupAuthorization,
  toWireMilestone,
  toWireProjectLabel,
  toWireUserAuthorization,
  UserAuthorizationSchema,
} from '../../wire/access.js';
import { ProjectSchema, toWireProject } from '../../wire/projects.js';
import { type ApiApp, childList, childListRoutes } from '../resource-routes.js';
import { inputDate, Nullable, page, PageQuery } from '../schemas/common.js';

const ProjectId = Type.Object({ projectId: Type.Integer() });
const tags = ['Project'];

/** ProjectSetting body (docs/compatibility.md#projects-settings): known parts only; their insides are checked by the domain. */
const SettingBody = Type.Object(
  {
    serviceDeskName: Type.Optional(Nullable(Type.String())),
    branchProtections: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    tagProtections: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    issueSetting: Type.Optional(Type.Unknown()),
    buildSetting: Type.Optional(Type.Unknown()),
    pullRequestSetting: Type.Optional(Type.Unknown()),
    namedCommitQueries: Type.Optional(Type.Unknown()),
    namedCodeCommentQueries: Type.Optional(Type.Unknown()),
    webHooks: Type.Optional(Type.Unknown()),
    contributedSettings: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

/** The project's milestones, filtered by name, dates and state, a page at a time (docs/compatibility.md#projects-milestones). */
function milestoneQueryRoute(app: ApiApp): void {
  app.get(
    '/projects/:projectId/milestones',
    {
      schema: {
        tags,
        summary: 'Query Milestones',
        params: ProjectId,
        querystring: Type.Object({
          name: Type.Optional(Type.String()),
          startBefore: Type.Optional(Type.String()),
          startAfter: Type.Optional(Type.String()),
          dueBefore: Type.Optional(Type.String()),
          dueAfter: Type.Optional(Type.String()),
          closed: Type.Optional(Type.Boolean()),
          ...PageQuery,
        }),
        response: { 200: Type.Array(MilestoneSchema) },
      },
    },
    async (request) => {
      const { offset, count } = page(request.query);
      const q = request.query;
      const rows = await queryMilestones(
        request.ctx,
        request.params.projectId,
        {
          name: q.name,
          startBefore: inputDate(q.startBefore, 'startBefore'),
          startAfter: inputDate(q.startAfter, 'startAfter'),
          dueBefore: inputDate(q.dueBefore, 'dueBefore'),
          dueAfter: inputDate(q.dueAfter, 'dueAfter'),
          closed: q.closed,
        },
        offset,
        count,
      );
      return rows.map(toWireMilestone);
    },
  );
}

/** The project's top contributors by commits, additions or deletions over a period (docs/compatibility.md#projects-endpoints). */
function topContributorsRoute(app: ApiApp): void {
  app.get(
    '/projects/:projectId/top-contributors',
    {
      schema: {
        tags,
        summary: 'Get Top Contributors',
        params: ProjectId,
        querystring: Type.Object({
          type: Type.Union([Type.Literal('COMMITS'), Type.Literal('ADDITIONS'), Type.Literal('DELETIONS')]),
          sinceDate: Type.String(),
          untilDate: Type.String(),
          count: Type.Integer({ minimum: 0 }),
        }),
        response: { 200: Type.Array(GitContributorSchema) },
      },
    },
    async (request) => {
      const { count } = page({ count: request.query.count });
      return topContributors(request.ctx, request.params.projectId, { ...request.query, count });
    },
  );
}

/**
 * The project sub-resources beyond basic info (docs/compatibility.md#projects-endpoints items 4–8,
 * #10, #11, #14): setting, forks, authorizations, labels, milestones, top contributors.
 */
export const projectSubresourceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/projects/:projectId/setting', { schema: { tags, summary: 'Get Setting', params: ProjectId } }, async (request) =>
    getProjectSetting(request.ctx, request.params.projectId),
  );

  app.post('/projects/:projectId/setting', { schema: { tags, summary: 'Update Setting', params: ProjectId, body: SettingBody } }, async (request) => {
    await updateProjectSetting(request.ctx, request.params.projectId, request.body as Record<string, unknown>);
    return '';
  });

  childListRoutes(app, { path: '/projects', idParam: 'projectId', tags }, [
    childList('forks', 'Get Forks', ProjectSchema, projectForks, toWireProject),
    childList('user-authorizations', 'Get User Authorizations', UserAuthorizationSchema, projectUserAuthorizations, toWireUserAuthorization),
    childList('group-authorizations', 'Get Group Authorizations', GroupAuthorizationSchema, projectGroupAuthorizations, toWireGroupAuthorization),
    childList('labels', 'Get Labels', ProjectLabelSchema, projectLabels, toWireProjectLabel),
  ]);
  milestoneQueryRoute(app);
  topContributorsRoute(app);
};
