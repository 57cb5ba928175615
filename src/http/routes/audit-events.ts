import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAdmin } from '../../domain/actor.js';
import { exportAuditEvents, queryAuditEvents, type AuditFilter, type AuditPage } from '../../domain/audit/index.js';
import { projectAuditEvents } from '../../domain/projects/index.js';
import { getAuditSetting, setAuditSetting } from '../../domain/settings/index.js';
import { AuditEventSchema, parseAuditCursor, toWireAuditEvent } from '../../wire/audit-events.js';
import { inputDate, Nullable, page, PageQuery } from '../schemas/common.js';

const tags = ['AuditEvent'];

/** The filters of docs/audit-log.md#page-and-api as query parameters. */
const FilterQuery = {
  actor: Type.Optional(Type.String({ description: 'the actor’s login name' })),
  action: Type.Optional(Type.String({ description: 'an action name, or `<target type>.*`' })),
  targetType: Type.Optional(Type.String()),
  since: Type.Optional(Type.String({ description: 'ISO-8601 date or epoch ms: rows at or after it' })),
  until: Type.Optional(Type.String({ description: 'ISO-8601 date or epoch ms: rows before it' })),
};
const ListQuery = Type.Object({
  ...FilterQuery,
  before: Type.Optional(Type.String({ description: 'a row’s `cursor`: the rows older than it (keyset paging, instead of `offset`)' })),
  ...PageQuery,
});
const ExportQuery = Type.Object(FilterQuery);

function filterOf(query: Static<typeof ExportQuery>): AuditFilter {
  return {
    actor: query.actor,
    action: query.action,
    targetType: query.targetType,
    since: inputDate(query.since, 'since'),
    until: inputDate(query.until, 'until'),
  };
}

function pageOf(query: Static<typeof ListQuery>): AuditPage {
  const { offset, count } = page(query);
  return { offset, count, before: query.before === undefined ? undefined : parseAuditCursor(query.before) };
}

const AuditSettingSchema = Type.Object(
  { retentionDays: Nullable(Type.Integer({ minimum: 0, description: 'days rows are kept; 0 or null keeps them for ever' })) },
  { additionalProperties: false },
);

/**
 * The audit log's API (docs/audit-log.md#page-and-api, docs/audit-log.md#export,
 * docs/audit-log.md#retention): `GET /~api/audit-events` and `GET /~api/projects/{id}/audit-events`
 * (filters, `offset`/`count` or keyset `before`), `GET /~api/audit-events/export` (JSON lines
 * streamed from the database in batches) and `/~api/settings/audit-log` (the retention).
 */
export const auditEventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit-events',
    {
      schema: {
        tags,
        summary: 'Query Audit Events',
        description: 'Administrators only; newest first.',
        querystring: ListQuery,
        response: { 200: Type.Array(AuditEventSchema) },
      },
    },
    async (request) => (await queryAuditEvents(request.ctx, filterOf(request.query), pageOf(request.query))).map(toWireAuditEvent),
  );

  app.get(
    '/audit-events/export',
    {
      schema: {
        tags,
        summary: 'Export Audit Events',
        description: 'Administrators only: every matching row, newest first, one JSON object a line (`application/x-ndjson`), streamed.',
        querystring: ExportQuery,
      },
    },
    async (request, reply) => {
      const batches = await exportAuditEvents(request.ctx, filterOf(request.query));
      const lines = Readable.from(
        (async function* () {
          for await (const rows of batches) yield rows.map((row) => `${JSON.stringify(toWireAuditEvent(row))}\n`).join('');
        })(),
      );
      return reply.type('application/x-ndjson').header('cache-control', 'no-store').send(lines);
    },
  );

  app.get(
    '/projects/:projectId/audit-events',
    {
      schema: {
        tags,
        summary: 'Query Project Audit Events',
        description: 'The project’s administrators: the rows of this project, newest first.',
        params: Type.Object({ projectId: Type.Integer() }),
        querystring: ListQuery,
        response: { 200: Type.Array(AuditEventSchema) },
      },
    },
    async (request) => (await projectAuditEvents(request.ctx, request.params.projectId, filterOf(request.query), pageOf(request.query))).map(toWireAuditEvent),
  );

  app.get(
    '/settings/audit-log',
    { schema: { tags: ['Setting'], summary: 'Get Audit Log Setting', response: { 200: AuditSettingSchema } } },
    async (request) => {
      requireAdmin(request.actor);
      return getAuditSetting(request.ctx);
    },
  );

  app.post('/settings/audit-log', { schema: { tags: ['Setting'], summary: 'Set Audit Log Setting', body: AuditSettingSchema } }, async (request) => {
    await setAuditSetting(request.ctx, request.body);
    return '';
  });
};
