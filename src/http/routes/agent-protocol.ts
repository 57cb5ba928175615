import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { AGENT_PATHS, LEASE_WAIT_MS } from '../../wire/agent-protocol.js';
import { agentTokenId, disconnectAgent } from '../../domain/agents/index.js';
import {
  agentConnect,
  agentHeartbeat,
  agentLease,
  appendJobLog,
  authorizeJob,
  finishAgentJob,
  openDependencyArtifact,
  openJobCache,
  openJobLfsObject,
  publishJobArtifact,
  saveJobCache,
  type JobGrant,
} from '../../domain/builds/index.js';
import { createContext, systemActor, type Context, type Services } from '../../domain/context.js';
import { advertiseRefs, serviceRpc } from '../../domain/repositories/index.js';
import { BadRequest, Forbidden, Unauthorized } from '../../errors.js';
import { Nullable } from '../schemas/common.js';

/** The bearer credential of a request (an agent token or a job token). */
function bearer(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header || !/^bearer /i.test(header)) throw new Unauthorized('An agent or job token is required (Authorization: Bearer)');
  return header.slice(7).trim();
}

const Session = Type.String({ minLength: 1, maxLength: 100 });
const Text = (maxLength: number) => Type.String({ maxLength });
const ConnectBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    osName: Text(255),
    osVersion: Text(255),
    osArch: Text(255),
    cpus: Type.Integer({ minimum: 1, maximum: 100_000 }),
    memory: Type.Number({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, multipleOf: 1 }),
    engine: Nullable(Text(255)),
    attributes: Type.Record(Type.String({ minLength: 1, maxLength: 255 }), Text(1000), { maxProperties: 200 }),
    previousSession: Type.Optional(Session),
  },
  { additionalProperties: false },
);
const HeartbeatBody = Type.Object(
  { session: Session, running: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 10_000 }) },
  { additionalProperties: false },
);
const DisconnectBody = Type.Object({ session: Session }, { additionalProperties: false });
const LeaseBody = Type.Object(
  { session: Session, waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: LEASE_WAIT_MS })) },
  { additionalProperties: false },
);
const FinishBody = Type.Object(
  {
    status: Type.Union([Type.Literal('SUCCESSFUL'), Type.Literal('FAILED'), Type.Literal('CANCELLED'), Type.Literal('TIMED_OUT')]),
    version: Type.Optional(Text(1000)),
    description: Type.Optional(Text(12_000)),
  },
  { additionalProperties: false },
);

/** An AbortSignal that fires when the client goes away before the response finished. */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * The agent protocol (docs/compatibility.md#build-agents "The agent protocol") under
 * `/~agent/`: outside the API's authentication, each call presents an agent token (connect,
 * heartbeat, lease) or a job token (the `job/` calls) as `Authorization: Bearer`, checked by the
 * domain. Encapsulated: log texts, artifacts and git bodies are raw streams here only.
 */
export const agentProtocolRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.removeContentTypeParser(['text/plain']);
  app.addContentTypeParser(['text/plain'], { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  // the agent protocol is Gitloom's own, not part of the REST API's OpenAPI document
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  // a closing server answers the lease requests waiting for a job at once, rather than holding its close for them
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  const context = (): Context => createContext(services, systemActor);
  const agentToken = (request: FastifyRequest) => agentTokenId(services.db, bearer(request));
  const job = async (request: FastifyRequest): Promise<{ ctx: Context; grant: JobGrant }> => {
    const ctx = context();
    return { ctx, grant: await authorizeJob(ctx, bearer(request)) };
  };

  app.post(AGENT_PATHS.connect, { schema: { body: ConnectBody } }, async (request) =>
    agentConnect(context(), await agentToken(request), request.body, request.ip, (error) => request.log.error({ err: error }, 'agent connect')),
  );

  app.post(AGENT_PATHS.disconnect, { schema: { body: DisconnectBody } }, async (request) => {
    await disconnectAgent(context(), await agentToken(request), request.body.session);
    return '';
  });

  app.post(AGENT_PATHS.heartbeat, { schema: { body: HeartbeatBody } }, async (request) => agentHeartbeat(context(), await agentToken(request), request.body));

  app.post(AGENT_PATHS.lease, { schema: { body: LeaseBody } }, async (request, reply) => {
    const tokenId = await agentToken(request);
    const { session, waitMs = LEASE_WAIT_MS } = request.body;
    const signal = AbortSignal.any([disconnectSignal(reply), closing.signal]);
    const leased = await agentLease(context(), tokenId, session, waitMs, signal, (error) => request.log.error({ err: error }, 'agent lease'));
    return leased ?? reply.code(204).send();
  });

  const gitPath = AGENT_PATHS.git;
  app.get(`${gitPath}/info/refs`, async (request, reply) => {
    const { ctx, grant } = await job(request);
    if ((request.query as Record<string, unknown>).service !== 'git-upload-pack') throw new Forbidden('A job token may only fetch');
    const res = await advertiseRefs({ repoPath: ctx.repoPath(grant.build.projectId) }, 'git-upload-pack', {
      gitProtocol: request.headers['git-protocol'] as string | undefined,
      signal: disconnectSignal(reply),
    });
    return reply.header('cache-control', 'no-cache').header('content-type', res.contentType).send(res.body);
  });
  app.post(`${gitPath}/git-upload-pack`, async (request, reply) => {
    const { ctx, grant } = await job(request);
    const res = await serviceRpc({ repoPath: ctx.repoPath(grant.build.projectId) }, 'git-upload-pack', request.body as Readable, {
      contentType: request.headers['content-type'],
      contentEncoding: request.headers['content-encoding'],
      gitProtocol: request.headers['git-protocol'] as string | undefined,
      signal: disconnectSignal(reply),
    });
    return reply.header('cache-control', 'no-cache').header('content-type', res.contentType).send(res.body);
  });

  app.get(`${AGENT_PATHS.lfs}/:oid`, { schema: { params: Type.Object({ oid: Type.String({ pattern: '^[0-9a-f]{64}$' }) }) } }, async (request, reply) => {
    const { ctx, grant } = await job(request);
    const opened = await openJobLfsObject(ctx, grant, request.params.oid);
    return reply.header('content-type', 'application/octet-stream').header('content-length', String(opened.length)).send(opened.stream);
  });

  app.get(
    `${AGENT_PATHS.dependencies}/:buildId/*`,
    { schema: { params: Type.Object({ buildId: Type.Integer(), '*': Type.String() }) } },
    async (request, reply) => {
      const { ctx, grant } = await job(request);
      const file = await openDependencyArtifact(ctx, grant, request.params.buildId, request.params['*']);
      return reply.header('content-type', 'application/octet-stream').header('content-length', String(file.length)).send(file.stream);
    },
  );

  app.post(AGENT_PATHS.log, async (request) => {
    const { ctx, grant } = await job(request);
    if (typeof request.body !== 'string') throw new BadRequest('Send the log lines as text/plain');
    await appendJobLog(ctx, grant, request.body, (error) => request.log.error({ err: error }, 'build log announcement'));
    return '';
  });

  app.post(`${AGENT_PATHS.artifacts}/*`, { schema: { params: Type.Object({ '*': Type.String() }) } }, async (request) => {
    const { ctx, grant } = await job(request);
    await publishJobArtifact(ctx, grant, request.params['*'], request.body as Readable, request.headers['content-length']);
    return '';
  });

  const cacheParams = { params: Type.Object({ key: Type.String({ minLength: 1, maxLength: 255 }) }) };
  app.get(`${AGENT_PATHS.caches}/:key`, { schema: cacheParams }, async (request, reply) => {
    const { ctx, grant } = await job(request);
    const opened = await openJobCache(ctx, grant, request.params.key);
    return reply.header('content-type', 'application/x-tar').header('content-length', String(opened.size)).send(opened.stream);
  });
  app.post(`${AGENT_PATHS.caches}/:key`, { schema: cacheParams }, async (request) => {
    const { ctx, grant } = await job(request);
    return { size: await saveJobCache(ctx, grant, request.params.key, request.body as Readable, request.headers['content-length']) };
  });

  app.post(AGENT_PATHS.finish, { schema: { body: FinishBody } }, async (request) => {
    const { ctx, grant } = await job(request);
    await finishAgentJob(ctx, grant, request.body);
    return '';
  });
};
