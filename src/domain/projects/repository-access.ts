import { Forbidden, NotFound, Unauthorized } from '../../errors.js';
import { refuseReadOnlyToken } from '../actor.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { projectPermissions } from './permissions.js';
import { findProjectByPath } from './projects.js';

/**
 * Authorizes git over HTTP (docs/compatibility.md#gitloom-differs-authentication, docs/compatibility.md#gitloom-differs-mount-and-media-types): clone and fetch need read code,
 * push needs write code. An anonymous caller that lacks the privilege, or asks for a project it
 * cannot see, gets 401 so the git client asks for credentials; a known user gets 404 for an
 * invisible project and 403 for a missing privilege; a read-only access token gets 403
 * (`GITLOOM_ERR_TOKEN_READ_ONLY`) for a push or an LFS upload. Returns the project id and
 * repository path.
 */
export async function authorizeRepository(ctx: Context, projectPath: string, access: 'read' | 'write'): Promise<{ projectId: number; repoPath: string }> {
  const anonymousCaller = ctx.actor.userId === ANONYMOUS_ID;
  const project = await findProjectByPath(ctx.db, projectPath);
  const permissions = project ? await projectPermissions(ctx, project) : null;
  if (!project || !permissions?.access) {
    if (anonymousCaller) throw new Unauthorized('Authentication required');
    throw new NotFound(`Project not found: ${projectPath}`);
  }
  const allowed = access === 'read' ? permissions.readCode : permissions.writeCode;
  if (!allowed) {
    if (anonymousCaller) throw new Unauthorized('Authentication required');
    throw new Forbidden(access === 'read' ? 'No permission to read code' : 'No permission to push code');
  }
  if (access === 'write') refuseReadOnlyToken(ctx.actor);
  return { projectId: project.id, repoPath: ctx.repoPath(project.id) };
}
