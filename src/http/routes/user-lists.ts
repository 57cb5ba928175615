import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { userAuthorizations } from '../../domain/projects/index.js';
import { userMemberships } from '../../domain/access/index.js';
import { userPullRequestLists } from '../../domain/pulls/index.js';
import { addSshKey, deleteSshKey, getSshKey, listSshKeys } from '../../domain/users/index.js';
import { MembershipSchema, SshKeySchema, toWireMembership, toWireSshKey, toWireUserAuthorization, UserAuthorizationSchema } from '../../wire/access.js';
import {
  PullRequestAssignmentSchema,
  PullRequestReviewSchema,
  PullRequestWatchSchema,
  toWirePullRequestAssignment,
  toWirePullRequestReview,
  toWirePullRequestWatch,
} from '../../wire/pulls.js';
import { textBody } from '../../plugins/bodies.js';
import { CreatedId, TextBody } from '../schemas/common.js';

const UserId = Type.Object({ userId: Type.Integer() });
const tags = ['User'];

/** The per-user lists (docs/compatibility.md#users-endpoints) and `/ssh-keys/{id}`. */
export const userListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/users/:userId/authorizations',
    { schema: { tags, summary: 'Get Authorizations', params: UserId, response: { 200: Type.Array(UserAuthorizationSchema) } } },
    async (request) => (await userAuthorizations(request.ctx, request.params.userId)).map(toWireUserAuthorization),
  );

  app.get(
    '/users/:userId/memberships',
    { schema: { tags, summary: 'Get Memberships', params: UserId, response: { 200: Type.Array(MembershipSchema) } } },
    async (request) => (await userMemberships(request.ctx, request.params.userId)).map(toWireMembership),
  );

  app.get(
    '/users/:userId/pull-request-reviews',
    { schema: { tags, summary: 'Get Pull Request Reviews', params: UserId, response: { 200: Type.Array(PullRequestReviewSchema) } } },
    async (request) => (await userPullRequestLists(request.ctx, request.params.userId, 'pullRequestReviews')).map(toWirePullRequestReview),
  );

  app.get(
    '/users/:userId/pull-request-assignments',
    { schema: { tags, summary: 'Get Pull Request Assignments', params: UserId, response: { 200: Type.Array(PullRequestAssignmentSchema) } } },
    async (request) => (await userPullRequestLists(request.ctx, request.params.userId, 'pullRequestAssignments')).map(toWirePullRequestAssignment),
  );

  app.get(
    '/users/:userId/pull-request-watches',
    { schema: { tags, summary: 'Get Pull Request Watches', params: UserId, response: { 200: Type.Array(PullRequestWatchSchema) } } },
    async (request) => (await userPullRequestLists(request.ctx, request.params.userId, 'pullRequestWatches')).map(toWirePullRequestWatch),
  );

  app.get(
    '/users/:userId/ssh-keys',
    { schema: { tags, summary: 'Get Ssh Keys', params: UserId, response: { 200: Type.Array(SshKeySchema) } } },
    async (request) => (await listSshKeys(request.ctx, request.params.userId)).map(toWireSshKey),
  );

  app.post(
    '/users/:userId/ssh-keys',
    {
      config: { textBody: true },
      schema: { tags, summary: 'Add Ssh Key', params: UserId, body: TextBody, response: { 200: CreatedId } },
    },
    async (request) => addSshKey(request.ctx, request.params.userId, textBody(request.body)),
  );

  const SshKeyId = Type.Object({ sshKeyId: Type.Integer() });
  app.get('/ssh-keys/:sshKeyId', { schema: { tags: ['SSH Key'], summary: 'Get', params: SshKeyId, response: { 200: SshKeySchema } } }, async (request) =>
    toWireSshKey(await getSshKey(request.ctx, request.params.sshKeyId)),
  );
  app.delete('/ssh-keys/:sshKeyId', { schema: { tags: ['SSH Key'], summary: 'Delete', params: SshKeyId } }, async (request) => {
    await deleteSshKey(request.ctx, request.params.sshKeyId);
    return '';
  });
};
