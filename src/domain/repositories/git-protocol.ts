/**
 * Serving the git smart-HTTP protocol for an authorized repository (docs/architecture.md#git-smart-http): which service a request names and the access it needs, the request's content type,
 * and the streamed exchange with git (src/git/smart-http.ts). The HTTP route
 * (src/http/routes/git-http.ts) matches URLs, authorizes, and sends what these functions return.
 */
import type { Readable } from 'node:stream';
import { BadRequest } from '../../errors.js';
import { advertiseRefs as advertise, parseService, serviceRpc as rpc, type GitService } from '../../git/smart-http.js';

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
