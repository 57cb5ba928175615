import { Type, type TObject } from '@sinclair/typebox';
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
import { childList, childListRoutes } from '../resource-routes.js';
import { crudRoutes, type CrudResource } from '../crud.js';
import { CreatedId, TextBody } from '../schemas/common.js';

const UserId = Type.Object({ userId: Type.Integer() });
const tags = ['User'];

/** `/ssh-keys/{sshKeyId}`: get and delete (docs/compatibility.md#email-addresses-and-ssh-keys). */
const sshKeys: CrudResource<Parameters<typeof toWireSshKey>[0], TObject, TObject> = {
  tag: 'SSH Key',
  collection: '/ssh-keys',
  idParam: 'sshKeyId',
  schema: SshKeySchema,
  toWire: toWireSshKey,
  get: getSshKey,
  delete: deleteSshKey,
};

/** The per-user lists (docs/compatibility.md#users-endpoints) and `/ssh-keys/{id}`. */
export const userListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  childListRoutes(app, { path: '/users', idParam: 'userId', tags }, [
    childList('authorizations', 'Get Authorizations', UserAuthorizationSchema, userAuthorizations, toWireUserAuthorization),
    childList('memberships', 'Get Memberships', MembershipSchema, userMemberships, toWireMembership),
    childList(
      'pull-request-reviews',
      'Get Pull Request Reviews',
      PullRequestReviewSchema,
      (ctx, id) => userPullRequestLists(ctx, id, 'pullRequestReviews'),
      toWirePullRequestReview,
    ),
    childList(
      'pull-request-assignments',
      'Get Pull Request Assignments',
      PullRequestAssignmentSchema,
      (ctx, id) => userPullRequestLists(ctx, id, 'pullRequestAssignments'),
      toWirePullRequestAssignment,
    ),
    childList(
      'pull-request-watches',
      'Get Pull Request Watches',
      PullRequestWatchSchema,
      (ctx, id) => userPullRequestLists(ctx, id, 'pullRequestWatches'),
      toWirePullRequestWatch,
    ),
    childList('ssh-keys', 'Get Ssh Keys', SshKeySchema, listSshKeys, toWireSshKey),
  ]);

  app.post(
    '/users/:userId/ssh-keys',
    {
      config: { textBody: true },
      schema: { tags, summary: 'Add Ssh Key', params: UserId, body: TextBody, response: { 200: CreatedId } },
    },
    async (request) => addSshKey(request.ctx, request.params.userId, textBody(request.body)),
  );

  await app.register(crudRoutes([sshKeys]));
};
