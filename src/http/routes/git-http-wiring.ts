import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { journalPush } from '../../domain/journal/ref-journal.js';
import { checkPush } from '../../domain/projects/branch-protection.js';
import { authorizeRepository } from '../../domain/projects/repository-access.js';
import { NotFound } from '../../errors.js';
import { createContext, systemActor, type Services } from '../../domain/context.js';
import { HOOK_SECRET_HEADER, preparePushHooks } from '../../domain/repositories/push-hooks.js';
import { gitHttpPlugin } from './git-http.js';

const HOOK_ROUTE = '/~internal/hooks';

/** The loopback URL of this server as seen by a process on the same host. */
function loopbackUrl(request: FastifyRequest): string {
  const address = request.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? (address.startsWith('::ffff:') ? address.slice(7) : `[${address}]`) : address;
  return `http://${host}:${request.socket.localPort}${HOOK_ROUTE}`;
}

const HookUpdates = Type.Array(Type.Object({ oldHash: Type.String(), newHash: Type.String(), ref: Type.String() }));

const PreReceiveBody = Type.Object({
  projectId: Type.Integer(),
  userId: Type.Integer(),
  updates: HookUpdates,
  quarantine: Type.Record(Type.String(), Type.String()),
});

const PostReceiveBody = Type.Object({
  projectId: Type.Integer(),
  userId: Type.Integer(),
  updates: HookUpdates,
});

/**
 * Mounts git smart HTTP at `/<project path>[.git]`: the caller resolved by the auth plugin is
 * authorized per project; pushes run the pre-receive hook (installed under `<data dir>/hooks`,
 * activated through `core.hooksPath` in git's environment), which asks
 * `POST /~internal/hooks/pre-receive` — guarded by a per-process secret — to enforce branch and
 * tag protection and to keep every ref outside `refs/heads/*` and `refs/tags/*` the server's
 * (docs/architecture.md#a-push, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input), and the post-receive hook, which
 * reports the exact ref changes and the pusher to `POST /~internal/hooks/post-receive`: they are
 * written to the ref-change journal before the push returns. The push environment also caps the
 * pack at `GITLOOM_PUSH_MAX_MB` (src/domain/repositories/push-hooks.ts). The receive-pack body is
 * a raw stream (src/http/routes/git-http.ts), so Fastify's `bodyLimit` does not apply to it; the
 * whole request must still arrive within `GITLOOM_REQUEST_TIMEOUT_MS`.
 */
export const gitHttpRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const hooks = await preparePushHooks(services.config);

  app.post(`${HOOK_ROUTE}/pre-receive`, { schema: { hide: true, body: PreReceiveBody } }, async (request) => {
    if (!hooks.accepts(request.headers[HOOK_SECRET_HEADER])) throw new NotFound('Not found');
    const body = request.body as typeof PreReceiveBody.static;
    const ctx = createContext(services, systemActor);
    return { errors: await checkPush(ctx, body.projectId, body.userId, body.updates, body.quarantine) };
  });

  app.post(`${HOOK_ROUTE}/post-receive`, { schema: { hide: true, body: PostReceiveBody } }, async (request) => {
    if (!hooks.accepts(request.headers[HOOK_SECRET_HEADER])) throw new NotFound('Not found');
    const body = request.body as typeof PostReceiveBody.static;
    await journalPush(createContext(services, systemActor), body.projectId, body.userId, body.updates);
    return {};
  });

  await app.register(gitHttpPlugin, {
    resolveRepository: async (request, projectPath, access) => {
      const repo = await authorizeRepository(request.ctx, projectPath, access);
      if (access === 'read') return repo;
      return {
        ...repo,
        env: hooks.envFor(loopbackUrl(request), repo.projectId, request.actor.userId),
      };
    },
  });
};
