import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createAccessToken,
  createUser,
  deleteAccessToken,
  deleteUser,
  getMyProfile,
  getUser,
  listAccessTokens,
  listEmailAddresses,
  queryUsers,
  setPassword,
  updateUser,
} from '../../domain/users/index.js';
import { visibleProjectIds } from '../../domain/projects/index.js';
import { AccessTokenSchema, EmailAddressSchema, toWireAccessToken, toWireEmailAddress, toWireUser, UserSchema } from '../../wire/users.js';
import { type ApiApp, childList, childListRoutes, queryRoute, itemActionRoutes, textAction, itemDeleteRoute, itemGetRoute } from '../resource-routes.js';
import { CreatedId, InputDate, inputDate, Nullable } from '../schemas/common.js';

const UserId = Type.Object({ userId: Type.Integer() });
const tags = ['User'];
const UserParent = { path: '/users', idParam: 'userId', tags };

/** My profile, a profile, and the query (docs/compatibility.md#users-endpoints). */
function userReadRoutes(app: ApiApp): void {
  app.get('/users/me', { schema: { tags, summary: 'Get My Profile', response: { 200: UserSchema } } }, async (request) =>
    toWireUser(getMyProfile(request.ctx)),
  );

  itemGetRoute(app, UserParent, 'Get Profile', UserSchema, getUser, toWireUser);

  queryRoute(app, {
    path: '/users',
    tags,
    summary: 'Query Profile',
    params: { term: Type.Optional(Type.String()) },
    schema: UserSchema,
    run: (ctx, params, offset, count) => queryUsers(ctx, params.term, offset, count),
    toWire: toWireUser,
  });
}

/** Create, update, set the password, delete (docs/compatibility.md#users-endpoints). */
function userWriteRoutes(app: ApiApp): void {
  app.post(
    '/users',
    {
      schema: {
        tags,
        summary: 'Create',
        body: Type.Object(
          {
            name: Type.String(),
            password: Type.String(),
            fullName: Type.Optional(Nullable(Type.String())),
            emailAddress: Type.String(),
          },
          { additionalProperties: false },
        ),
        response: { 200: CreatedId },
      },
    },
    async (request) => createUser(request.ctx, request.body),
  );

  app.post(
    '/users/:userId',
    {
      schema: {
        tags,
        summary: 'Update Profile',
        params: UserId,
        body: Type.Object({ name: Type.Optional(Type.String()), fullName: Type.Optional(Nullable(Type.String())) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      await updateUser(request.ctx, request.params.userId, request.body);
      return '';
    },
  );

  itemActionRoutes(app, UserParent, [textAction('password', 'Set Password', setPassword)]);

  itemDeleteRoute(app, UserParent, deleteUser);
}

/** Access tokens (list, create, delete; docs/compatibility.md#users-access-tokens) and email addresses (list; docs/compatibility.md#email-addresses-and-ssh-keys). */
function userCredentialRoutes(app: ApiApp): void {
  childListRoutes(app, UserParent, [childList('access-tokens', 'Get Access Tokens', AccessTokenSchema, listAccessTokens, toWireAccessToken)]);

  app.post(
    '/users/:userId/access-tokens',
    {
      // a request without a body means no description and no expiry
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Create Access Token',
        params: UserId,
        body: Type.Optional(
          Type.Object(
            {
              description: Type.Optional(Nullable(Type.String())),
              expireDate: Type.Optional(Nullable(InputDate)),
              // Gitloom's own (docs/compatibility.md#gitloom-differs-sessions-and-tokens)
              readOnly: Type.Optional(Type.Boolean()),
              projectIds: Type.Optional(Nullable(Type.Array(Type.Integer(), { maxItems: 1000 }))),
            },
            { additionalProperties: false },
          ),
        ),
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const value = await createAccessToken(request.ctx, request.params.userId, {
        description: body.description ?? null,
        expireDate: inputDate(body.expireDate ?? null, 'expireDate'),
        readOnly: body.readOnly ?? false,
        // a token reaches only projects its creator can see: an invisible one is 404
        projectIds: body.projectIds ? await visibleProjectIds(request.ctx, body.projectIds) : null,
      });
      return reply.type('text/plain; charset=utf-8').send(value);
    },
  );

  app.delete(
    '/users/:userId/access-tokens/:accessTokenValue',
    {
      schema: { tags, summary: 'Delete Access Token', params: Type.Object({ userId: Type.Integer(), accessTokenValue: Type.String() }) },
    },
    async (request) => {
      await deleteAccessToken(request.ctx, request.params.userId, request.params.accessTokenValue);
      return '';
    },
  );

  childListRoutes(app, UserParent, [childList('email-addresses', 'Get Email Addresses', EmailAddressSchema, listEmailAddresses, toWireEmailAddress)]);
}

/** `/~api/users` (docs/compatibility.md#users-endpoints). */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  userReadRoutes(app);
  userWriteRoutes(app);
  userCredentialRoutes(app);
};
