import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createGroupAuthorization,
  createUserAuthorization,
  deleteGroupAuthorization,
  deleteUserAuthorization,
  getGroupAuthorization,
  getUserAuthorization,
  groupAuthorizations,
  updateGroupAuthorization,
  updateUserAuthorization,
} from '../../domain/projects/index.js';
import {
  createGroup,
  createMembership,
  createRole,
  deleteGroup,
  deleteMembership,
  deleteRole,
  getGroup,
  getMembership,
  getRole,
  groupMemberships,
  queryGroups,
  queryRoles,
  updateGroup,
  updateRole,
} from '../../domain/access/index.js';
import {
  GroupAuthorizationSchema,
  GroupSchema,
  MembershipSchema,
  RoleLeadingFields,
  RoleSchema,
  toWireGroup,
  toWireGroupAuthorization,
  toWireMembership,
  toWireRole,
  toWireUserAuthorization,
  UserAuthorizationSchema,
} from '../../wire/access.js';
import { crudRoutes } from '../crud.js';
import { CreatedId, Nullable } from '../schemas/common.js';

const RoleFields = {
  ...RoleLeadingFields,
  editableIssueFields: Type.Unknown({ description: '{"@type": "AllIssueFields" | "NoneIssueFields" | "IncludeIssueFields" | "ExcludeIssueFields", …}' }),
  manageBuilds: Type.Boolean(),
  jobPrivileges: Type.Array(
    Type.Object(
      {
        jobNames: Type.String(),
        manageJob: Type.Optional(Type.Boolean()),
        runJob: Type.Optional(Type.Boolean()),
        accessLog: Type.Optional(Type.Boolean()),
        accessibleReports: Type.Optional(Nullable(Type.String())),
      },
      { additionalProperties: false },
    ),
  ),
};
const RoleBody = Type.Partial(Type.Object(RoleFields), { additionalProperties: false });

const GroupBody = Type.Partial(
  Type.Object({
    name: Type.String(),
    description: Nullable(Type.String()),
    administrator: Type.Boolean(),
    createRootProjects: Type.Boolean(),
    enforce2FA: Type.Boolean(),
  }),
  { additionalProperties: false },
);

const UserAuthorizationBody = Type.Object({ projectId: Type.Integer(), userId: Type.Integer(), roleId: Type.Integer() }, { additionalProperties: false });
const GroupAuthorizationBody = Type.Object({ projectId: Type.Integer(), groupId: Type.Integer(), roleId: Type.Integer() }, { additionalProperties: false });
const NameQuery = { name: Type.Optional(Type.String()) };

/**
 * Roles, groups, user/group authorizations (docs/compatibility.md#roles, docs/compatibility.md#authorizations, docs/compatibility.md#groups-and-memberships) and
 * memberships (docs/compatibility.md#gitloom-differs-additions-to-the-interface).
 */
export const accessRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(
    crudRoutes([
      {
        tag: 'Role',
        collection: '/roles',
        idParam: 'roleId',
        schema: RoleSchema,
        toWire: toWireRole,
        createBody: RoleBody,
        updateBody: RoleBody,
        get: getRole,
        create: createRole,
        update: updateRole,
        delete: deleteRole,
        query: { params: NameQuery, run: (ctx, params, offset, count) => queryRoles(ctx, params.name as string | undefined, offset, count) },
      },
      {
        tag: 'Group',
        collection: '/groups',
        idParam: 'groupId',
        schema: GroupSchema,
        toWire: toWireGroup,
        createBody: GroupBody,
        updateBody: GroupBody,
        get: getGroup,
        create: createGroup,
        update: updateGroup,
        delete: deleteGroup,
        query: { params: NameQuery, run: (ctx, params, offset, count) => queryGroups(ctx, params.name as string | undefined, offset, count) },
      },
      {
        tag: 'User Authorization',
        collection: '/user-authorizations',
        idParam: 'authorizationId',
        schema: UserAuthorizationSchema,
        toWire: toWireUserAuthorization,
        createBody: UserAuthorizationBody,
        updateBody: Type.Partial(UserAuthorizationBody),
        get: getUserAuthorization,
        create: (ctx, body) => createUserAuthorization(ctx, body as never),
        update: updateUserAuthorization,
        delete: deleteUserAuthorization,
      },
      {
        tag: 'Group Authorization',
        collection: '/group-authorizations',
        idParam: 'authorizationId',
        schema: GroupAuthorizationSchema,
        toWire: toWireGroupAuthorization,
        createBody: GroupAuthorizationBody,
        updateBody: Type.Partial(GroupAuthorizationBody),
        get: getGroupAuthorization,
        create: (ctx, body) => createGroupAuthorization(ctx, body as never),
        update: updateGroupAuthorization,
        delete: deleteGroupAuthorization,
      },
    ]),
  );

  const GroupId = Type.Object({ groupId: Type.Integer() });
  app.get(
    '/groups/:groupId/authorizations',
    { schema: { tags: ['Group'], summary: 'Get Authorizations', params: GroupId, response: { 200: Type.Array(GroupAuthorizationSchema) } } },
    async (request) => (await groupAuthorizations(request.ctx, request.params.groupId)).map(toWireGroupAuthorization),
  );
  app.get(
    '/groups/:groupId/memberships',
    { schema: { tags: ['Group'], summary: 'Get Memberships', params: GroupId, response: { 200: Type.Array(MembershipSchema) } } },
    async (request) => (await groupMemberships(request.ctx, request.params.groupId)).map(toWireMembership),
  );

  const MembershipId = Type.Object({ membershipId: Type.Integer() });
  const mtags = ['Membership'];
  app.get(
    '/memberships/:membershipId',
    { schema: { tags: mtags, summary: 'Get', params: MembershipId, response: { 200: MembershipSchema } } },
    async (request) => toWireMembership(await getMembership(request.ctx, request.params.membershipId)),
  );
  app.post(
    '/memberships',
    {
      schema: {
        tags: mtags,
        summary: 'Create',
        body: Type.Object({ userId: Type.Integer(), groupId: Type.Integer() }, { additionalProperties: false }),
        response: { 200: CreatedId },
      },
    },
    async (request) => createMembership(request.ctx, request.body),
  );
  app.delete('/memberships/:membershipId', { schema: { tags: mtags, summary: 'Delete', params: MembershipId } }, async (request) => {
    await deleteMembership(request.ctx, request.params.membershipId);
    return '';
  });
};
