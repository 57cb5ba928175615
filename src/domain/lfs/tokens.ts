/**
 * Short-lived Git LFS tokens (docs/security.md#git-lfs, docs/compatibility.md#git-lfs): what
 * `git-lfs-authenticate` over SSH answers, and what a batch response puts in its actions' headers
 * so the transfers that follow need no password check. A token names one user, one project and
 * one operation and expires after {@link LFS_TOKEN_TTL_S} seconds; it is signed (HMAC-SHA256 with
 * a key derived from the server's secret key), so every server process sharing the data dir or
 * `GITLOOM_SECRET_KEY` accepts it and none has to store it. It grants no more than the user's
 * permissions at the time it is used, and only on the LFS endpoints of its project.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import { Forbidden, Unauthorized } from '../../errors.js';
import { actorOfUser } from '../auth/index.js';
import { withActor, type Context } from '../context.js';
import { loadProjectWith, secretKey } from '../projects/index.js';

/** The `Authorization` scheme of an LFS token (`Authorization: Gitloom-LFS <token>`). */
export const LFS_TOKEN_SCHEME = 'Gitloom-LFS';
/** How long a token lives, seconds. */
export const LFS_TOKEN_TTL_S = 600;

/** What an LFS token allows: `download` reads objects and locks; `upload` also writes them. */
export type LfsOperation = 'download' | 'upload';

/** The claims of a verified token. */
export interface LfsTokenClaims {
  userId: number;
  projectId: number;
  operation: LfsOperation;
  /** Expiry, epoch ms. */
  expires: number;
}

const keys = new WeakMap<Buffer, Buffer>();

/** The signing key of LFS tokens: HKDF-SHA256 of the server's secret key, for this purpose only. */
export function lfsTokenKey(config: Pick<Config, 'dataDir' | 'secretKey'>): Buffer {
  const master = secretKey(config);
  let key = keys.get(master);
  if (!key) keys.set(master, (key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'gitloom lfs token v1', 32))));
  return key;
}

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

/**
 * Makes a token for `claims` (no permission check: see {@link issueLfsToken}).
 *
 * @returns the token text (`v1.<payload>.<signature>`, base64url parts).
 */
export function signLfsToken(key: Buffer, claims: LfsTokenClaims): string {
  const payload = Buffer.from(JSON.stringify([claims.userId, claims.projectId, claims.operation, claims.expires])).toString('base64url');
  return `v1.${payload}.${sign(key, `v1.${payload}`)}`;
}

/**
 * Checks a token's signature and expiry.
 *
 * @param now epoch ms.
 * @throws Unauthorized('Invalid or expired LFS token') for anything but a valid, unexpired token.
 */
export function verifyLfsToken(key: Buffer, token: string, now: number): LfsTokenClaims {
  const invalid = () => new Unauthorized('Invalid or expired LFS token');
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1' || token.length > 512) throw invalid();
  const expected = Buffer.from(sign(key, `${parts[0]}.${parts[1]}`));
  const given = Buffer.from(parts[2]);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(claims) || claims.length !== 4) throw invalid();
  const [userId, projectId, operation, expires] = claims as [unknown, unknown, unknown, unknown];
  if (!Number.isSafeInteger(userId) || !Number.isSafeInteger(projectId) || (operation !== 'download' && operation !== 'upload')) throw invalid();
  if (typeof expires !== 'number' || expires <= now) throw invalid();
  return { userId: userId as number, projectId: projectId as number, operation, expires };
}

/** The answer of `git-lfs-authenticate` (the Git LFS API's server discovery over SSH). */
export interface LfsAuthentication {
  /** The project's LFS endpoint: `<server URL>/<project path>.git/info/lfs`. */
  href: string;
  /** Headers the client sends with every LFS request: `Authorization: Gitloom-LFS <token>`. */
  header: { Authorization: string };
  /** Seconds the token stays valid. */
  expires_in: number;
}

/**
 * Issues a token for `userId` on `projectId` (see the module comment) after checking that the
 * user may read the project's code (`download`) or write it (`upload`), and answers in the JSON
 * shape of `git-lfs-authenticate`: `{ href, header: { Authorization }, expires_in }`. The SSH
 * server calls it for `git-lfs-authenticate <project> <operation>`.
 *
 * @param request `operation` as the client asked: `download` or `upload`.
 * @throws Unauthorized (no such user), NotFound (no such project, or invisible to the user),
 *   Forbidden (lacking the privilege, or an unknown operation).
 */
export async function issueLfsToken(ctx: Context, request: { userId: number; projectId: number; operation: LfsOperation }): Promise<LfsAuthentication> {
  if (request.operation !== 'download' && request.operation !== 'upload') throw new Forbidden(`Unknown LFS operation: ${String(request.operation)}`);
  const actor = await actorOfUser(ctx.db, request.userId, ctx.now());
  const { project } = await loadProjectWith(withActor(ctx, actor), request.projectId, request.operation === 'upload' ? 'writeCode' : 'readCode');
  const expires = ctx.now() + LFS_TOKEN_TTL_S * 1000;
  const token = signLfsToken(lfsTokenKey(ctx.config), { ...request, expires });
  return {
    href: `${ctx.config.serverUrl}/${project.path}.git/info/lfs`,
    header: { Authorization: `${LFS_TOKEN_SCHEME} ${token}` },
    expires_in: LFS_TOKEN_TTL_S,
  };
}
