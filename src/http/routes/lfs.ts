/**
 * Git LFS over HTTP (docs/compatibility.md#git-lfs): the batch API, the basic transfer adapter
 * and the file locking API of the Git LFS API specification, under
 * `<clone URL>/info/lfs/…` — the paths a git-lfs client derives from the clone URL. Dispatched by
 * the git smart HTTP plugin (src/http/routes/git-http.ts); answers `application/vnd.git-lfs+json`
 * and errors in the specification's shape (`message`, `documentation_url`, `request_id`; a 401
 * with `LFS-Authenticate`).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequest, GitloomError, NotFound, RangeNotSatisfiable } from '../../errors.js';
import {
  authorizeLfs,
  batch,
  createLock,
  downloadObject,
  LFS_TOKEN_SCHEME,
  listLocks,
  LockExists,
  unlock,
  uploadObject,
  verifyLocks,
  type BatchRequest,
  type LfsRepository,
} from '../../domain/lfs/index.js';
import { credentialsHeader } from '../../plugins/auth.js';
import { checkJsonValue } from '../../plugins/bodies.js';
import { BASIC_CHALLENGE, offerBasicChallenge } from '../../plugins/cross-site.js';

/** The media type of every LFS JSON request and answer. */
export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';

/** Where an LFS request is addressed. */
export interface LfsTarget {
  /** The project path (without `.git`). */
  projectPath: string;
  /** The URL of the project's LFS endpoint as the client reached it, `<server>/<path>[.git]/info/lfs`. */
  base: string;
  /** What follows `info/lfs/`: `objects/batch`, `objects/<oid>`, `locks`, … */
  rest: string;
}

/** Whether a URL is one of the LFS endpoints (for the error format). */
export const isLfsUrl = (url: string): boolean => /\/info\/lfs\//.test(url.split('?')[0]);

/** The LFS token of the request (`Authorization: Gitloom-LFS <token>`), or null. */
function lfsToken(request: FastifyRequest): string | null {
  const header = credentialsHeader(request);
  const prefix = `${LFS_TOKEN_SCHEME.toLowerCase()} `;
  return header && header.toLowerCase().startsWith(prefix) ? header.slice(prefix.length).trim() : null;
}

/** 406 unless the client accepts the LFS media type (or anything JSON). */
function acceptsLfsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return !accept || /application\/vnd\.git-lfs\+json|application\/json|\*\/\*/.test(accept);
}

const json = (reply: FastifyReply, status: number, body: unknown): FastifyReply =>
  reply.code(status).type(LFS_MEDIA_TYPE).serializer(JSON.stringify).send(body);

/**
 * Serves one LFS request (see the module comment): authorizes the caller for the operation (read
 * for downloads and listing locks, write for uploads and locks), then answers.
 *
 * @throws the domain's errors, rendered by {@link sendLfsError}.
 */
export async function lfsRoute(request: FastifyRequest, reply: FastifyReply, target: LfsTarget): Promise<FastifyReply> {
  const { rest } = target;
  const authorize = (need: 'read' | 'write'): Promise<LfsRepository> => authorizeLfs(request.ctx, target.projectPath, need, lfsToken(request));
  const object = /^objects\/([^/]+)(?:\/([^/]+))?$/.exec(rest);
  if (request.method === 'PUT' && object) {
    await uploadObject(await authorize('write'), object[1], object[2] ?? null, request.headers['content-length'], request.body);
    return reply.code(200).send();
  }
  if (request.method === 'GET' && object && object[1] !== 'batch' && !object[2]) {
    const opened = await downloadObject(await authorize('read'), object[1], request.headers.range);
    reply.type('application/octet-stream').header('Content-Length', opened.length).header('Accept-Ranges', 'bytes');
    if (opened.range) reply.code(206).header('Content-Range', `bytes ${opened.range.start}-${opened.range.end}/${opened.size}`);
    return reply.send(opened.stream);
  }
  if (!acceptsLfsJson(request)) return json(reply, 406, lfsErrorBody(request, `Accept must allow ${LFS_MEDIA_TYPE}`));
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (request.method === 'POST' && rest === 'objects/batch') {
    const repo = await authorize(body.operation === 'upload' ? 'write' : 'read');
    return json(reply, 200, await batch(repo, body as BatchRequest, target.base));
  }
  if (request.method === 'GET' && rest === 'locks') return json(reply, 200, await listLocks(await authorize('read'), request.query as Record<string, unknown>));
  if (request.method === 'POST' && rest === 'locks') return json(reply, 201, { lock: await createLock(await authorize('write'), body) });
  if (request.method === 'POST' && rest === 'locks/verify') return json(reply, 200, await verifyLocks(await authorize('write'), body));
  const unlocking = /^locks\/([^/]+)\/unlock$/.exec(rest);
  if (request.method === 'POST' && unlocking) return json(reply, 200, { lock: await unlock(await authorize('write'), unlocking[1], body) });
  throw new NotFound('Not found');
}

function lfsErrorBody(request: FastifyRequest, message: string): Record<string, unknown> {
  return { message, documentation_url: `${request.ctx?.config.serverUrl ?? ''}/~help/api`, request_id: request.id };
}

/**
 * Renders an error of an LFS request in the specification's shape: the error's status and
 * message; a 401 also says `LFS-Authenticate: Basic realm="Gitloom"` (and `WWW-Authenticate` to
 * clients that are not browsers); a refused lock creation carries the existing `lock`. An
 * unexpected error is logged and answers 500 `Internal server error`.
 */
export function sendLfsError(error: FastifyError | GitloomError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  let status: number;
  let message: string;
  if (error instanceof GitloomError) {
    ({ status, message } = error);
  } else if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    ({ statusCode: status, message } = error as Required<FastifyError>);
  } else {
    request.log.error({ err: error }, 'unexpected error');
    status = 500;
    message = 'Internal server error';
  }
  // RFC 9110 §15.5.17: a 416 names the current length
  if (error instanceof RangeNotSatisfiable) reply.header('Content-Range', `bytes */${error.size}`);
  if (status === 401) {
    reply.header('LFS-Authenticate', BASIC_CHALLENGE);
    offerBasicChallenge(request, reply);
  }
  const body = lfsErrorBody(request, message);
  return json(reply, status, error instanceof LockExists ? { lock: error.lock, ...body } : body);
}

/** Parses an `application/vnd.git-lfs+json` body as the API's JSON bodies are parsed (NUL bytes and nesting checked). */
export function parseLfsJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequest('The body is not JSON', { code: 'GITLOOM_ERR_MALFORMED_JSON' });
  }
  checkJsonValue(value);
  return value;
}
