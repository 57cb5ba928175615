import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getNotification, listNotifications, markAllNotificationsRead, markNotification } from '../../domain/notifications/index.js';
import { NotificationSchema, toWireNotification } from '../../wire/notifications.js';
import { inputDate } from '../schemas/common.js';

const tags = ['Notification'];
const ThreadParams = Type.Object({ threadId: Type.Integer() });
const DateText = Type.String({ description: 'ISO-8601 date or epoch milliseconds' });

/**
 * The signed-in user's notification inbox (Gitloom addition, docs/compatibility.md#notification-inbox),
 * modelled on GitHub's notifications API (https://docs.github.com/en/rest/activity/notifications):
 * list, mark all read, read one thread, mark it read (PATCH) or unread (PATCH with
 * `{"unread": true}`), mark it done (DELETE). Another user's thread is 404 like an unknown one.
 */
export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/notifications',
    {
      schema: {
        tags,
        summary: 'List Notifications',
        description:
          "The caller's notifications not marked done, newest update first: unread ones only unless `all=true`; `participating=true` keeps those where the caller is the author, mentioned or asked for a review; `since` and `before` bound the update date. Pages by `page` (from 1) and `per_page` (default 50, at most 100).",
        querystring: Type.Object({
          all: Type.Boolean({ default: false }),
          participating: Type.Boolean({ default: false }),
          since: Type.Optional(DateText),
          before: Type.Optional(DateText),
          page: Type.Integer({ minimum: 1, default: 1 }),
          per_page: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
        }),
        response: { 200: Type.Array(NotificationSchema) },
      },
    },
    async (request) => {
      const { all, participating, since, before, page, per_page: perPage } = request.query;
      const list = await listNotifications(request.ctx, {
        all,
        participating,
        since: inputDate(since, 'since'),
        before: inputDate(before, 'before'),
        offset: (page - 1) * perPage,
        limit: perPage,
      });
      return list.map((n) => toWireNotification(n, request.ctx.config.serverUrl));
    },
  );

  app.put(
    '/notifications',
    {
      schema: {
        tags,
        summary: 'Mark Notifications As Read',
        description: 'Marks every unread notification updated at or before `last_read_at` (default: now) read. Answers 205 Reset Content.',
        body: Type.Optional(
          Type.Union([
            Type.Object({ last_read_at: Type.Optional(Type.Union([DateText, Type.Integer({ format: 'int64' })])) }, { additionalProperties: false }),
            Type.Null(),
          ]),
        ),
      },
    },
    async (request, reply) => {
      await markAllNotificationsRead(request.ctx, inputDate(request.body?.last_read_at, 'last_read_at'));
      return reply.code(205).send();
    },
  );

  app.get(
    '/notifications/threads/:threadId',
    { schema: { tags, summary: 'Get Notification Thread', params: ThreadParams, response: { 200: NotificationSchema } } },
    async (request) => toWireNotification(await getNotification(request.ctx, request.params.threadId), request.ctx.config.serverUrl),
  );

  app.patch(
    '/notifications/threads/:threadId',
    {
      schema: {
        tags,
        summary: 'Mark Notification Thread As Read',
        description: 'Marks the thread read; with the body `{"unread": true}` marks it unread again. Answers 205 Reset Content.',
        params: ThreadParams,
        body: Type.Optional(Type.Union([Type.Object({ unread: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), Type.Null()])),
      },
    },
    async (request, reply) => {
      await markNotification(request.ctx, request.params.threadId, request.body?.unread ? 'unread' : 'read');
      return reply.code(205).send();
    },
  );

  app.delete(
    '/notifications/threads/:threadId',
    {
      schema: {
        tags,
        summary: 'Mark Notification Thread As Done',
        description: 'Marks the thread done: read and out of the list until its next event. Answers 204.',
        params: ThreadParams,
      },
    },
    async (request, reply) => {
      await markNotification(request.ctx, request.params.threadId, 'done');
      return reply.code(204).send();
    },
  );
};
