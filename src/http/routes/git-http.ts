/**
 * Git smart HTTP routes (CONTRACT.md §1: git at `/<project path>` and `/<project path>.git`):
 * `GET …/info/refs?service=…`, `POST …/git-upload-pack`, `POST …/git-receive-pack`, for nested
 * project paths such as `group/sub/app`. The plugin knows nothing about the database: the caller
 * supplies `resolveRepository` (authentication, permission, path → repository) and is told about
 * pushed ref changes through `onRefsUpdated`.
 *
 * Encapsulated (no fastify-plugin): its raw-stream body parser for the two git request content
 * types does not affect other routes. It claims a wildcard route and answers 404 for any path
 * that is not one of the three smart-HTTP endpoints.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { BadRequest, NotFound, Unauthorized } from '../../errors.js';
import {
  diffRefs,
  getDefaultBranch,
  listRefs,
  pickDefaultBranch,
  setDefaultBranch,
  type RefChange,
} from '../../git/refs.js';
import { advertiseRefs, parseService, serviceRpc, type GitHttpResponse } from '../../git/smart-http.js';

/** What `resolveRepository` returns for an accessible project. */
export interface ResolvedRepository {
  /** Absolute path of the project's bare repository. */
  repoPath: string;
  /** The project's id, passed back to `onRefsUpdated`. */
  projectId: number;
  /** Extra environment for git (e.g. variables for server-side hooks). */
  env?: Record<string, string>;
  /** The authenticated caller (the pusher, for receive-pack), passed back to `onRefsUpdated`. */
  userId?: number | null;
}

/** Options of {@link gitHttpPlugin}. */
export interface GitHttpPluginOptions {
  /**
   * Authenticates the request and maps a project path (`group/app`, without `.git`) to its
   * repository. `access` is `write` for receive-pack (push), `read` for upload-pack (fetch/clone).
   * Throws NotFound (unknown or invisible project), Unauthorized (credentials needed; answered
   * with `WWW-Authenticate: Basic realm="Gitloom"`) or Forbidden.
   */
  resolveRepository(request: FastifyRequest, projectPath: string, access: 'read' | 'write'): Promise<ResolvedRepository>;
  /**
   * Called after a push response ended, with the refs the push changed (sorted by ref name;
   * `oldHash` null = created, `newHash` null = deleted) and the pusher (`userId` of the resolved
   * repository, null when it named none). Errors are logged, not propagated.
   */
  onRefsUpdated?(projectId: number, changes: RefChange[], userId: number | null): void | Promise<void>;
}

const REQUEST_TYPES = ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'];
const INFO_REFS = /^(.+?)(?:\.git)?\/info\/refs$/;
const RPC = /^(.+?)(?:\.git)?\/(git-upload-pack|git-receive-pack)$/;

/** Checks the project part of the URL: non-empty segments, no `.`/`..`, none starting with `~`. */
function projectPathOf(path: string): string {
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || s.startsWith('~'))) throw new NotFound('Not found');
  return segments.join('/');
}

function noCache(reply: FastifyReply): void {
  reply
    .header('Cache-Control', 'no-cache, max-age=0, must-revalidate')
    .header('Pragma', 'no-cache')
    .header('Expires', 'Fri, 01 Jan 1980 00:00:00 GMT');
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
    if (err instanceof Unauthorized) reply.header('WWW-Authenticate', 'Basic realm="Gitloom"');
    throw err;
  }
}

function send(reply: FastifyReply, res: GitHttpResponse): FastifyReply {
  noCache(reply);
  reply.header('Content-Type', res.contentType);
  return reply.send(res.body);
}

/**
 * Fastify plugin serving git smart HTTP under `/<project path>` and `/<project path>.git`.
 * After a push it re-links HEAD when the repository had no default branch (to the pushed branch
 * `main`, else `master`, else the alphabetically first; before the client sees the push finish),
 * then reports the ref changes via `onRefsUpdated` once the response ended.
 *
 * @param app the (encapsulated) Fastify instance.
 * @param opts `resolveRepository` and optional `onRefsUpdated`.
 * @see ARCHITECTURE.md "Git notes" (smart HTTP), reference/projects.md §7 (default branch)
 * @example await app.register(gitHttpPlugin, { resolveRepository, onRefsUpdated });
 */
export async function gitHttpPlugin(app: FastifyInstance, opts: GitHttpPluginOptions): Promise<void> {
  app.addContentTypeParser(REQUEST_TYPES, (_request, payload, done) => done(null, payload));

  app.get('/*', async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    const match = INFO_REFS.exec(path);
    if (!match) throw new NotFound('Not found');
    const projectPath = projectPathOf(match[1]);
    const service = parseService((request.query as Record<string, string | undefined>).service);
    const access = service === 'git-receive-pack' ? 'write' : 'read';
    const repo = await resolve(opts, request, reply, projectPath, access);
    const res = await advertiseRefs(repo.repoPath, service, {
      gitProtocol: request.headers['git-protocol'] as string | undefined,
      env: repo.env,
      signal: disconnectSignal(reply),
    });
    return send(reply, res);
  });

  app.post('/*', async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    const match = RPC.exec(path);
    if (!match) throw new NotFound('Not found');
    const projectPath = projectPathOf(match[1]);
    const service = parseService(match[2]);
    const push = service === 'git-receive-pack';
    const repo = await resolve(opts, request, reply, projectPath, push ? 'write' : 'read');
    const contentType = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (contentType !== `application/x-${service}-request`) {
      throw new BadRequest(`Content type must be application/x-${service}-request`);
    }
    const body = request.body as Readable;
    const common = {
      contentEncoding: request.headers['content-encoding'],
      gitProtocol: request.headers['git-protocol'] as string | undefined,
      env: repo.env,
      signal: disconnectSignal(reply),
    };
    if (!push) return send(reply, await serviceRpc(repo.repoPath, service, body, common));

    const before = await listRefs(repo.repoPath);
    const hadDefault = (await getDefaultBranch(repo.repoPath)) !== null;
    let settled: Promise<RefChange[]> | null = null;
    // Diff the refs and link the default branch once: before the response ends when the push
    // succeeded, otherwise after git stopped (a failed push may still have moved some refs).
    const settle = (): Promise<RefChange[]> =>
      (settled ??= (async () => {
        const changes = diffRefs(before, await listRefs(repo.repoPath));
        if (!hadDefault) {
          const pushed = changes
            .filter((c) => c.newHash !== null && c.ref.startsWith('refs/heads/'))
            .map((c) => c.ref.slice('refs/heads/'.length));
          const branch = pickDefaultBranch(pushed);
          if (branch !== null) await setDefaultBranch(repo.repoPath, branch);
        }
        return changes;
      })());
    const res = await serviceRpc(repo.repoPath, service, body, {
      ...common,
      beforeEnd: async () => {
        await settle();
      },
    });
    const notify = async (): Promise<void> => {
      await res.done.catch(() => {});
      const changes = await settle();
      if (changes.length > 0 && opts.onRefsUpdated) await opts.onRefsUpdated(repo.projectId, changes, repo.userId ?? null);
    };
    reply.raw.once('close', () => {
      notify().catch((err: unknown) => request.log.error({ err }, 'git push post-processing failed'));
    });
    return send(reply, res);
  });
}

export default gitHttpPlugin;
