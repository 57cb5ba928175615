import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { NotFound } from '../../errors.js';
import { createContext, systemActor, type Services } from '../../domain/context.js';
import { type GitAccess, HOOK_SECRET_HEADER, HOOKS_PATH } from '../../domain/repositories/index.js';
import { gitHttpPlugin } from './git-http.js';
import { lfsRoute } from './lfs.js';

/** The loopback URL of this server as seen by a process on the same host. */
function loopbackUrl(request: FastifyRequest): string {
  const address = request.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? (address.startsWith('::ffff:') ? address.slice(7) : `[${address}]`) : address;
  return `http://${host}:${request.socket.localPort}${HOOKS_PATH}`;
}

const HookUpdates = Type.Array(Type.Object({ oldHash: Type.String(), newHash: Type.String(), ref: Type.String() }));

const PreReceiveBody = Type.Object({
  projectId: Type.Integer(),
  userId: Type.Integer(),
  pushId: Type.String(),
  updates: HookUpdates,
  quarantine: Type.Record(Type.String(), Type.String()),
});

const PostReceiveBody = Type.Object({
  projectId: Type.Integer(),
  userId: Type.Integer(),
  pushId: Type.String(),
  updates: HookUpdates,
});

/**
 * Mounts git smart HTTP at `/<project path>[.git]`: the caller resolved by the auth plugin is
 * authorized per project through `gitAccess` (src/domain/repositories/git-access.ts, shared with
 * git over SSH); pushes run the pre-receive hook (installed under `<data dir>/hooks`, activated
 * through `core.hooksPath` in git's environment), which asks
 * `POST /~internal/hooks/pre-receive` — guarded by a per-process secret — to enforce branch and
 * tag protection and to keep every ref outside `refs/heads/*` and `refs/tags/*` the server's
 * (docs/architecture.md#a-push, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input) and, when it allows them, to write the
 * ref changes to the ref-change journal as intents (a database that cannot take them refuses the
 * push before any ref moves); the post-receive hook reports the exact ref changes and the pusher
 * to `POST /~internal/hooks/post-receive`, which confirms them in the journal before the push
 * returns. A push whose new LFS pointers name objects the project cannot read is refused
 * (docs/compatibility.md#git-lfs); the Git LFS endpoints under `<clone URL>/info/lfs/` are served
 * by src/http/routes/lfs.ts. Pushes over SSH post to the same endpoints. The push environment also caps the
 * pack at `GITLOOM_PUSH_MAX_MB` (src/domain/repositories/push-hooks.ts). The receive-pack body is
 * a raw stream (src/http/routes/git-http.ts), so Fastify's `bodyLimit` does not apply to it; the
 * whole request must still arrive within `GITLOOM_REQUEST_TIMEOUT_MS`.
 */
export const gitHttpRoutes: FastifyPluginAsync<{ services: Services; gitAccess: GitAccess }> = async (app, { services, gitAccess }) => {
  // the secret is checked before the body is: without it the endpoints do not exist
  const onRequest = async (request: FastifyRequest) => {
    if (!gitAccess.accepts(request.headers[HOOK_SECRET_HEADER])) throw new NotFound('Not found');
  };

  app.post(`${HOOKS_PATH}/pre-receive`, { schema: { hide: true, body: PreReceiveBody }, onRequest }, async (request) =>
    gitAccess.preReceive(createContext(services, systemActor), request.body as typeof PreReceiveBody.static),
  );

  app.post(`${HOOKS_PATH}/post-receive`, { schema: { hide: true, body: PostReceiveBody }, onRequest }, async (request) => {
    await gitAccess.postReceive(createContext(services, systemActor), request.body as typeof PostReceiveBody.static);
    return {};
  });

  await app.register(gitHttpPlugin, {
    lfs: lfsRoute,
    resolveRepository: (request, projectPath, access) => gitAccess.authorize(request.ctx, projectPath, access, loopbackUrl(request)),
  });
};
