import { randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { systemActor } from '../../domain/context.js';
import { checkPush } from '../../domain/projects/branch-protection.js';
import { authorizeRepository } from '../../domain/projects/repository-access.js';
import { NotFound } from '../../errors.js';
import { HOOK_ENV, HOOK_SECRET_HEADER, installHooks } from '../../git/hooks.js';
import { createContext, type Services } from '../../services.js';
import { gitHttpPlugin } from './git-http.js';

const HOOK_ROUTE = '/~internal/hooks/pre-receive';

/** The loopback URL of this server as seen by a process on the same host. */
function loopbackUrl(request: FastifyRequest): string {
  const address = request.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? (address.startsWith('::ffff:') ? address.slice(7) : `[${address}]`) : address;
  return `http://${host}:${request.socket.localPort}${HOOK_ROUTE}`;
}

function secretMatches(secret: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(secret);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

const PreReceiveBody = Type.Object({
  projectId: Type.Integer(),
  userId: Type.Integer(),
  updates: Type.Array(Type.Object({ oldHash: Type.String(), newHash: Type.String(), ref: Type.String() })),
  quarantine: Type.Record(Type.String(), Type.String()),
});

/**
 * Mounts git smart HTTP at `/<project path>[.git]`: the caller resolved by the auth plugin is
 * authorized per project; pushes run the pre-receive hook (installed under `<data dir>/hooks`,
 * activated through `core.hooksPath` in git's environment), which asks
 * `POST /~internal/hooks/pre-receive` — guarded by a per-process secret — to enforce branch and
 * tag protection (ARCHITECTURE.md "The two main flows" #2); pushed ref changes become
 * `refsUpdated` events.
 */
export const gitHttpRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const secret = randomBytes(32).toString('hex');
  const hookEnv = await installHooks(path.join(services.config.dataDir, 'hooks'), process.execPath);

  app.post(HOOK_ROUTE, { schema: { hide: true, body: PreReceiveBody } }, async (request) => {
    if (!secretMatches(secret, request.headers[HOOK_SECRET_HEADER])) throw new NotFound('Not found');
    const body = request.body as typeof PreReceiveBody.static;
    const ctx = createContext(services, systemActor);
    return { errors: await checkPush(ctx, body.projectId, body.userId, body.updates, body.quarantine) };
  });

  await app.register(gitHttpPlugin, {
    resolveRepository: async (request, projectPath, access) => {
      const repo = await authorizeRepository(request.ctx, projectPath, access);
      if (access === 'read') return repo;
      return {
        ...repo,
        userId: request.actor.userId,
        env: {
          ...hookEnv,
          [HOOK_ENV.url]: loopbackUrl(request),
          [HOOK_ENV.secret]: secret,
          [HOOK_ENV.projectId]: String(repo.projectId),
          [HOOK_ENV.userId]: String(request.actor.userId),
        },
      };
    },
    onRefsUpdated: (projectId, changes, userId) => {
      services.events.emit('refsUpdated', { projectId, changes, userId });
    },
  });
};
