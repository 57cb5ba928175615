import { Type, type TObject } from '@sinclair/typebox';
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
import { childList, childListRoutes } from '../resource-routes.js';
import { crudRoutes, type CrudResource, nameQuery } from '../crud.js';
import { Nullable } from '../schemas/common.js';

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

/** Roles, groups and user/group authorizations: the standard resources (docs/compatibility.md#roles, docs/compatibility.md#authorizations, docs/compatibility.md#groups-and-memberships). */
const resources: CrudResource<any, TObject, TObject>[] = [
  {
    tag: 'Role',
    collection: '/roles',
    idParam: 'roleId',
    schema: RoleSchema,
    toWire: toWireRole,
    get: getRole,
    create: { body: RoleBody, run: createRole },
    update: { body: RoleBody, run: updateRole },
    delete: deleteRole,
    query: nameQuery(queryRoles),
  },
  {
    tag: 'Group',
    collection: '/groups',
    idParam: 'groupId',
    schema: GroupSchema,
    toWire: toWireGroup,
    get: getGroup,
    create: { body: GroupBody, run: createGroup },
    update: { body: GroupBody, run: updateGroup },
    delete: deleteGroup,
    query: nameQuery(queryGroups),
  },
  {
    tag: 'User Authorization',
    collection: '/user-authorizations',
    idParam: 'authorizationId',
    schema: UserAuthorizationSchema,
    toWire: toWireUserAuthorization,
    get: getUserAuthorization,
    create: { body: UserAuthorizationBody, run: (ctx, body) => createUserAuthorization(ctx, body as never) },
    update: { body: Type.Partial(UserAuthorizationBody), run: updateUserAuthorization },
    delete: deleteUserAuthorization,
  },
  {
    tag: 'Group Authorization',
    collection: '/group-authorizations',
    idParam: 'authorizationId',
    schema: GroupAuthorizationSchema,
    toWire: toWireGroupAuthorization,
    get: getGroupAuthorization,
    create: { body: GroupAuthorizationBody, run: (ctx, body) => createGroupAuthorization(ctx, body as never) },
    update: { body: Type.Partial(GroupAuthorizationBody), run: updateGroupAuthorization },
    delete: deleteGroupAuthorization,
  },
];

/** Memberships: get, create, delete (docs/compatibility.md#gitloom-differs-additions-to-the-interface). */
const memberships: CrudResource<any, TObject, TObject> = {
  tag: 'Membership',
  collection: '/memberships',
  idParam: 'membershipId',
  schema: MembershipSchema,
  toWire: toWireMembership,
  get: getMembership,
  create: { body: Type.Object({ userId: Type.Integer(), groupId: Type.Integer() }, { additionalProperties: false }), run: createMembership },
  delete: deleteMembership,
};

/**
 * Roles, groups, user/group authorizations (docs/compatibility.md#roles, docs/compatibility.md#authorizations, docs/compatibility.md#groups-and-memberships) and
 * memberships (docs/compatibility.md#gitloom-differs-additions-to-the-interface).
 */
export const accessRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(crudRoutes(resources));
  childListRoutes(app, { path: '/groups', idParam: 'groupId', tags: ['Group'] }, [
    childList('authorizations', 'Get Authorizations', GroupAuthorizationSchema, groupAuthorizations, toWireGroupAuthorization),
    childList('memberships', 'Get Memberships', MembershipSchema, groupMemberships, toWireMembership),
  ]);

  await app.register(crudRoutes([memberships]));
};
