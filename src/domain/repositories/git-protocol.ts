/**
 * Serving git's protocol for an authorized repository, over either transport: which service a
 * request names and the access it needs, the project path of a git URL, the request's content
 * type, and the streamed exchange with git — smart HTTP (docs/architecture.md#git-smart-http,
 * src/git/smart-http.ts) or one SSH command (docs/compatibility.md#git-over-ssh,
 * src/git/service-session.ts). The HTTP route (src/http/routes/git-http.ts) and the SSH server
 * (src/ssh/) match URLs or commands, authorize (src/domain/repositories/git-access.ts), and hand
 * over to these functions.
 */
import type { Readable, Writable } from 'node:stream';
import { BadRequest, NotFound } from '../../errors.js';
import { serveSession } from '../../git/service-session.js';
import { advertiseRefs as advertise, parseService, serviceRpc as rpc, type GitService } from '../../git/smart-http.js';

export type { GitService };

/** A repository a request was authorized for: its bare repository and extra environment for git. */
export interface ServedRepository {
  /** Absolute path of the project's bare repository. */
  repoPath: string;
  /** Extra environment for git (e.g. variables read by the server-side hooks of a push). */
  env?: Record<string, string>;
}

/** What the client sent beside the body: its `Git-Protocol` header, and a signal fired when it left. */
export interface GitProtocolRequest {
  gitProtocol?: string;
  signal?: AbortSignal;
}

/** A streamed smart-HTTP answer: the `Content-Type` to send and the body (errors if git fails midway). */
export interface GitProtocolResponse {
  contentType: string;
  body: Readable;
}

/** A smart-HTTP service named by a request, and the repository access it needs. */
export interface GitServiceAccess {
  service: GitService;
  /** `write` for receive-pack (push), `read` for upload-pack (fetch, clone). */
  access: 'read' | 'write';
}

/**
 * The service a request names (`?service=` of info/refs, or the last URL segment) and the access
 * it needs, to authorize before anything runs.
 *
 * @throws BadRequest `Unsupported service: X` for anything but the two git services.
 */
export function gitServiceAccess(name: string | undefined): GitServiceAccess {
  const service = parseService(name);
  return { service, access: service === 'git-receive-pack' ? 'write' : 'read' };
}

/**
 * Checks the project part of a git URL (`group/app`): non-empty segments, no `.`/`..`, none
 * starting with `~` (the server's own routes), no control character (an SSH command may carry a
 * NUL, which no project path holds and PostgreSQL cannot even compare).
 *
 * @returns the path unchanged.
 * @throws NotFound `Project not found: <path>` otherwise (control characters shown as `?`).
 */
export function checkGitProjectPath(path: string): string {
  const invalid = /[\x00-\x1f\x7f]/.test(path) || path.split('/').some((s) => s === '' || s === '.' || s === '..' || s.startsWith('~'));
  if (invalid) throw new NotFound(`Project not found: ${path.replace(/[\x00-\x1f\x7f]/g, '?')}`);
  return path;
}

/**
 * The project path an SSH command names (`group/app` of `/group/app.git`, `group/app/` or
 * `group/app`): one leading and one trailing `/` and a trailing `.git` dropped, as the HTTP
 * clone URL's path, then checked by {@link checkGitProjectPath}.
 *
 * @throws NotFound `Project not found: <path>`.
 */
export function gitProjectPath(path: string): string {
  return checkGitProjectPath(
    path
      .replace(/^\//, '')
      .replace(/\/$/, '')
      .replace(/\.git$/, ''),
  );
}

/**
 * `GET …/info/refs?service=…`: the ref advertisement of `repo` (protocol v2 capabilities when the
 * client asks for them), streamed.
 *
 * @throws GitError when git fails before producing output.
 */
export async function advertiseRefs(repo: ServedRepository, service: GitService, request: GitProtocolRequest): Promise<GitProtocolResponse> {
  return advertise(repo.repoPath, service, { ...request, env: repo.env });
}

/**
 * `POST …/git-upload-pack` and `POST …/git-receive-pack`: checks the request's content type
 * (`application/x-<service>-request`, parameters ignored), then streams `body` (gunzipped when
 * `contentEncoding` says gzip) through git and git's answer back.
 *
 * @throws BadRequest for another content type, an unsupported encoding, or a request git refused
 *   (src/git/smart-http.ts serviceRpc); GitError when git was killed or could not start.
 */
export async function serviceRpc(
  repo: ServedRepository,
  service: GitService,
  body: Readable,
  request: GitProtocolRequest & { contentType?: string; contentEncoding?: string },
): Promise<GitProtocolResponse> {
  const contentType = (request.contentType ?? '').split(';')[0].trim().toLowerCase();
  if (contentType !== `application/x-${service}-request`) {
    throw new BadRequest(`Content type must be application/x-${service}-request`);
  }
  return rpc(repo.repoPath, service, body, {
    gitProtocol: request.gitProtocol,
    contentEncoding: request.contentEncoding,
    env: repo.env,
    signal: request.signal,
  });
}

/** A two-way connection's streams for {@link serveGitSession}: the client's bytes, git's answer, git's messages. */
export interface GitSessionStreams {
  input: Readable;
  output: Writable;
  errors: Writable;
}

/**
 * One git command over SSH (`git-upload-pack '<path>'`, `git-receive-pack '<path>'`): runs the
 * service on `repo` for the whole connection, streamed both ways, with the client's
 * `GIT_PROTOCOL` (`version=2`) and the repository's environment (a push's hooks).
 *
 * @returns git's exit code, for the channel's exit status.
 * @throws GitError when git could not start or ran out of time.
 */
export async function serveGitSession(repo: ServedRepository, service: GitService, streams: GitSessionStreams, request: GitProtocolRequest): Promise<number> {
  return serveSession(repo.repoPath, service, streams, { gitProtocol: request.gitProtocol, env: repo.env, signal: request.signal });
}
