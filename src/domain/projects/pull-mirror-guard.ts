/**
 * The one rule a pull mirror imposes on its project (docs/compatibility.md#repository-mirrors):
 * its branches and tags follow the remote, so no user moves them — pushes (HTTP and SSH alike,
 * through the pre-receive check), the repository API's branch, tag and file edits, merges of pull
 * requests into it and the source branch operations are refused. Only the mirror's own sync moves
 * them. Whether a project is a pull mirror is answered by the mirrors area, which this area may
 * not import (src/domain/providers.ts).
 */
import type { Db } from '../../db/database.js';
import { Conflict } from '../../errors.js';
import type { Context } from '../context.js';
import { Provided } from '../providers.js';

/** Whether a project has a pull mirror (enabled or not). */
export const hasPullMirror = new Provided<(db: Db, projectId: number) => Promise<boolean>>('whether a project is a pull mirror');

/** Why a user may not move a ref of a pull-mirrored project (a push's `remote:` line, a 409's detail). */
export const PULL_MIRROR_REFUSAL =
  'This project is a pull mirror: its branches and tags follow the remote repository and cannot be changed here (push to the remote instead)';

/**
 * Refuses a ref change by a user on a pull-mirrored project.
 *
 * @throws Conflict (409, `GITLOOM_ERR_PULL_MIRRORED`) when the project has a pull mirror.
 */
export async function assertNotPullMirror(ctx: Pick<Context, 'db'>, projectId: number): Promise<void> {
  if (await hasPullMirror.ask(ctx.db, projectId)) throw new Conflict(PULL_MIRROR_REFUSAL, { code: 'GITLOOM_ERR_PULL_MIRRORED' });
}
