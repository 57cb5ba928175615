import { Forbidden, Unauthorized } from '../../errors.js';
import { actorOfUser } from '../auth/index.js';
import { withActor, type Context } from '../context.js';
import { authorizeRepository } from '../projects/index.js';
import { lfsTokenKey, verifyLfsToken } from './tokens.js';

/** A project's LFS endpoint as one caller may use it. */
export interface LfsRepository {
  projectId: number;
  /** The bare repository. */
  repoPath: string;
  /** The context of the caller: the request's, or that of the user an LFS token names. */
  ctx: Context;
}

/**
 * Authorizes a call of a project's LFS endpoint (docs/compatibility.md#git-lfs) as git over HTTP
 * is authorized: `read` (downloads, listing locks) needs read code, `write` (uploads, locks)
 * write code. The caller is the request's (Basic password or access token, or anonymous), or,
 * when `token` (an LFS token, see src/domain/lfs/tokens.ts) is given, the user it names — for
 * its project only, and for `write` only when it is an upload token; the user's permissions at
 * this moment still decide.
 *
 * @throws Unauthorized (anonymous without the privilege; a bad, expired or foreign token),
 *   NotFound (no such project, or invisible), Forbidden (lacking the privilege).
 */
export async function authorizeLfs(ctx: Context, projectPath: string, need: 'read' | 'write', token: string | null): Promise<LfsRepository> {
  if (token === null) return { ...(await authorizeRepository(ctx, projectPath, need)), ctx };
  const claims = verifyLfsToken(lfsTokenKey(ctx.config), token, ctx.now());
  const caller = withActor(ctx, await actorOfUser(ctx.db, claims.userId, ctx.now()));
  const repo = await authorizeRepository(caller, projectPath, need);
  if (repo.projectId !== claims.projectId) throw new Unauthorized('The LFS token is for another project');
  if (need === 'write' && claims.operation !== 'upload') throw new Forbidden('The LFS token allows downloads only');
  return { ...repo, ctx: caller };
}
