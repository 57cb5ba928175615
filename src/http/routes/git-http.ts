/**
 * Git smart HTTP routes (docs/compatibility.md#gitloom-differs-mount-and-media-types: git at `/<project path>` and `/<project path>.git`):
 * `GET …/info/refs?service=…`, `POST …/git-upload-pack`, `POST …/git-receive-pack`, for nested
 * project paths such as `group/sub/app`. The plugin knows nothing about the database: the caller
 * supplies `resolveRepository` (authentication, permission, path → repository, and the hook
 * environment through which a push reports its ref changes to the ref-change journal).
 *
 * Encapsulated (no fastify-plugin): its raw-stream body parser for the two git request content
 * types does not affect other routes. It claims a wildcard route and answers 404 for any path
 * that is not one of the three smart-HTTP endpoints or, with the `lfs` option, a Git LFS path
 * under `<project path>[.git]/info/lfs/` (docs/compatibility.md#git-lfs; GET, POST and PUT).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { NotFound, Unauthorized } from '../../errors.js';
import { advertiseRefs, checkGitProjectPath, type GitProtocolResponse, gitServiceAccess, serviceRpc } from '../../domain/repositories/index.js';
import { offerBasicChallenge } from '../../plugins/cross-site.js';
import { isLfsUrl, LFS_MEDIA_TYPE, parseLfsJson, sendLfsError, type LfsTarget } from './lfs.js';

/** What `resolveRepository` returns for an accessible project. */
export interface ResolvedRepository {
  /** Absolute path of the project's bare repository. */
  repoPath: string;
  /** The project's id. */
  projectId: number;
  /** Extra environment for git (e.g. variables for server-side hooks). */
  env?: Record<string, string>;
}

/** Options of {@link gitHttpPlugin}. */
export interface GitHttpPluginOptions {
  /**
   * Authenticates the request and maps a project path (`group/app`, without `.git`) to its
   * repository. `access` is `write` for receive-pack (push), `read` for upload-pack (fetch/clone).
   * Throws NotFound (unknown or invisible project), Unauthorized (credentials needed; answered
   * with `WWW-Authenticate: Basic realm="Gitloom"` unless a browser asked, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input) or
   * Forbidden.
   */
  resolveRepository(request: FastifyRequest, projectPath: string, access: 'read' | 'write'): Promise<ResolvedRepository>;
  /** Serves a Git LFS request under `<project path>[.git]/info/lfs/` (src/http/routes/lfs.ts); absent: such paths are 404. */
  lfs?(request: FastifyRequest, reply: FastifyReply, target: LfsTarget): Promise<FastifyReply>;
}

const INFO_REFS = /^(.+?)(?:\.git)?\/info\/refs$/;
const RPC = /^(.+?)(?:\.git)?\/(git-upload-pack|git-receive-pack)$/;
const LFS = /^((.+?)(?:\.git)?)\/info\/lfs\/(.+)$/;

/**
 * Passes a request under `…/info/lfs/` to the LFS handler; false when the path is not one.
 * The href base the LFS answers use is the server URL and the path as the client wrote it.
 */
async function serveLfs(opts: GitHttpPluginOptions, request: FastifyRequest, reply: FastifyReply, path: string): Promise<boolean> {
  const match = LFS.exec(path);
  if (!match) return false;
  if (!opts.lfs) throw new NotFound('Not found');
  const projectPath = checkGitProjectPath(match[2]);
  await opts.lfs(request, reply, { projectPath, base: `${request.ctx.config.serverUrl}/${match[1]}/info/lfs`, rest: match[3] });
  return true;
}

function noCache(reply: FastifyReply): void {
  reply.header('Cache-Control', 'no-cache, max-age=0, must-revalidate').header('Pragma', 'no-cache').header('Expires', 'Fri, 01 Jan 1980 00:00:00 GMT');
}

/** An AbortSignal that fires when the client disconnects before the response finished. */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

async function resolve(
  opts: GitHttpPluginOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  projectPath: string,
  access: 'read' | 'write',
): Promise<ResolvedRepository> {
  try {
    return await opts.resolveRepository(request, projectPath, access);
  } catch (err) {
    if (err instanceof Unauthorized) offerBasicChallenge(request, reply);
    throw err;
  }
}

function send(reply: FastifyReply, res: GitProtocolResponse): FastifyReply {
  noCache(reply);
  reply.header('Content-Type', res.contentType);
  return reply.send(res.body);
}

/**
 * Fastify plugin serving git smart HTTP under `/<project path>` and `/<project path>.git`.
 * What a push changed is told by receive-pack's hooks (src/git/hook-program.ts), not by this
 * plugin.
 *
 * @param app the (encapsulated) Fastify instance.
 * @param opts `resolveRepository`.
 * @see docs/architecture.md#git-smart-http, docs/compatibility.md#projects-repository-and-default-branch (default branch)
 * @example await app.register(gitHttpPlugin, { resolveRepository });
 */
export async function gitHttpPlugin(app: FastifyInstance, opts: GitHttpPluginOptions): Promise<void> {
  // git's bodies and LFS uploads (whatever type git-lfs detected in the content) are raw
  // streams; LFS JSON bodies are parsed as the API's are
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addContentTypeParser([LFS_MEDIA_TYPE, 'application/json'], { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseLfsJson(body as string));
    } catch (error) {
      done(error as Error);
    }
  });
  // LFS requests answer errors in the LFS shape; the others go on to the server's error mapper
  app.setErrorHandler((error, request, reply) => {
    if (isLfsUrl(request.url)) return sendLfsError(error as FastifyError, request, reply);
    throw error;
  });
  // the git protocol is not part of the REST API's OpenAPI document
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

  app.get('/*', async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    if (await serveLfs(opts, request, reply, path)) return reply;
    const match = INFO_REFS.exec(path);
    if (!match) throw new NotFound('Not found');
    const projectPath = checkGitProjectPath(match[1]);
    const { service, access } = gitServiceAccess((request.query as Record<string, string | undefined>).service);
    const repo = await resolve(opts, request, reply, projectPath, access);
    const res = await advertiseRefs(repo, service, {
      gitProtocol: request.headers['git-protocol'] as string | undefined,
      signal: disconnectSignal(reply),
    });
    return send(reply, res);
  });

  // fetches and LFS downloads are POSTs too: the repository's authorization refuses what a read-only token may not do
  app.post('/*', { config: { checksReadOnlyTokens: true } }, async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    if (await serveLfs(opts, request, reply, path)) return reply;
    const match = RPC.exec(path);
    if (!match) throw new NotFound('Not found');
    const projectPath = checkGitProjectPath(match[1]);
    const { service, access } = gitServiceAccess(match[2]);
    const repo = await resolve(opts, request, reply, projectPath, access);
    return send(
      reply,
      await serviceRpc(repo, service, request.body as Readable, {
        contentType: request.headers['content-type'],
        contentEncoding: request.headers['content-encoding'],
        gitProtocol: request.headers['git-protocol'] as string | undefined,
        signal: disconnectSignal(reply),
      }),
    );
  });

  app.put('/*', { config: { checksReadOnlyTokens: true } }, async (request, reply) => {
    if (await serveLfs(opts, request, reply, (request.params as { '*': string })['*'])) return reply;
    throw new NotFound('Not found');
  });
}

export default gitHttpPlugin;
