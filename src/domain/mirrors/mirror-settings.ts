/**
 * A project's repository mirrors as the API and the settings page manage them
 * (docs/compatibility.md#repository-mirrors): validation, create, update, delete, "sync now",
 * and the view that never holds the password. Everything needs the manage-project privilege.
 */
import type { RepositoryMirrorRow } from '../../db/schema.js';
import { deleteRefsUnder } from '../../git/remotes.js';
import { listRefs } from '../../git/repository.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { auditChanges, recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { isForeignKeyViolation, isUniqueViolation } from '../unique.js';
import { stagingPrefix } from './pull-sync.js';
import { mirrorDue } from './mirror-worker.js';
import { checkMirrorUrl, sealPassword } from './remote-connection.js';

/** Shortest interval between two syncs of a pull mirror, minutes (Gitea's default minimum). */
export const MIN_INTERVAL_MINUTES = 10;
/** Longest interval, minutes (a week). */
export const MAX_INTERVAL_MINUTES = 10_080;
/** Interval of a pull mirror created without one, minutes. */
export const DEFAULT_INTERVAL_MINUTES = 60;
/** Push mirrors one project may have. */
export const MAX_PUSH_MIRRORS = 10;

/** A mirror's direction: PULL (the project follows the remote) or PUSH (the remote follows the project). */
export type MirrorDirection = 'PULL' | 'PUSH';

/** The fields a create or update gives (update: absent keeps, null clears). */
export interface MirrorInput {
  direction?: MirrorDirection;
  url?: string;
  userName?: string | null;
  /** The password or access token, in clear; never shown back. */
  password?: string | null;
  intervalMinutes?: number | null;
  enabled?: boolean;
}

/** A mirror as it is shown: its row without the password (only whether one is set) nor the lease's owner. */
export type MirrorView = Omit<RepositoryMirrorRow, 'password' | 'leaseOwner' | 'leaseExpires' | 'pendingDate'> & {
  passwordSet: boolean;
  /** Whether a server process is syncing it now. */
  syncing: boolean;
};

function toView(row: RepositoryMirrorRow, now: number): MirrorView {
  const { password, leaseOwner, leaseExpires, pendingDate, ...rest } = row;
  return { ...rest, passwordSet: password !== null, syncing: leaseOwner !== null && (leaseExpires ?? 0) > now };
}

const invalid = (detail: string) => new BadRequest(detail, { code: 'GITLOOM_ERR_MIRROR_VALUE' });

/** A user name for HTTP Basic: no colon, no control characters, at most 255 characters; empty is none. */
function checkUserName(value: string | null): string | null {
  const name = value?.trim() ?? '';
  if (name === '') return null;
  if (name.length > 255 || /[:\0-\x1f\x7f]/.test(name)) throw invalid('userName must be at most 255 characters, without colons or control characters');
  return name;
}

/** A password or token: at most 4096 characters, no NUL or line break; empty is none. */
function checkPassword(value: string | null): string | null {
  if (value === null || value === '') return null;
  if (value.length > 4096 || /[\0\r\n]/.test(value)) throw invalid('password must be at most 4096 characters, without NUL or line breaks');
  return value;
}

/** A pull mirror's interval: whole minutes within bounds (default {@link DEFAULT_INTERVAL_MINUTES}); a push mirror has none. */
function checkInterval(direction: MirrorDirection, value: number | null | undefined): number | null {
  if (direction === 'PUSH') {
    if (value !== undefined && value !== null) throw invalid('intervalMinutes applies to pull mirrors only: a push mirror is pushed after each change');
    return null;
  }
  const minutes = value ?? DEFAULT_INTERVAL_MINUTES;
  if (!Number.isInteger(minutes) || minutes < MIN_INTERVAL_MINUTES || minutes > MAX_INTERVAL_MINUTES) {
    throw invalid(`intervalMinutes must be a whole number of minutes from ${MIN_INTERVAL_MINUTES} to ${MAX_INTERVAL_MINUTES}`);
  }
  return minutes;
}

function checkDirection(value: unknown): MirrorDirection {
  if (value !== 'PULL' && value !== 'PUSH') throw invalid('direction must be PULL or PUSH');
  return value;
}

/** Whether two URLs name the same origin (scheme, host, port). */
function sameOrigin(a: string, b: string): boolean {
  return new URL(a).origin === new URL(b).origin;
}

/** The settings of a mirror once `input` is applied to `stored` (or to nothing: a create), checked. */
async function mergedSettings(ctx: Context, input: MirrorInput, stored: RepositoryMirrorRow | null) {
  const direction = stored ? stored.direction : checkDirection(input.direction);
  if (stored && input.direction !== undefined && input.direction !== stored.direction) {
    throw invalid('direction cannot change: delete the mirror and add another');
  }
  if (!stored && input.url === undefined) throw new BadRequest('url is required', { code: 'GITLOOM_ERR_MIRROR_URL' });
  const url = input.url === undefined ? stored!.url : await checkMirrorUrl(ctx, input.url);
  const userName = input.userName === undefined ? (stored?.userName ?? null) : checkUserName(input.userName);
  // a stored password goes to the origin it was given for only (docs/security.md#outbound-connections)
  const keepsPassword = stored !== null && input.password === undefined && sameOrigin(url, stored.url);
  const password = input.password === undefined ? null : checkPassword(input.password);
  const sealed = password !== null ? sealPassword(ctx, password) : keepsPassword ? stored.password : null;
  if (sealed !== null && userName === null) throw invalid('userName is required with a password (with an access token any name will do)');
  const intervalMinutes = checkInterval(direction, input.intervalMinutes === undefined ? stored?.intervalMinutes : input.intervalMinutes);
  const enabled = input.enabled ?? (stored ? Boolean(stored.enabled) : true);
  return { direction, url, userName, password: sealed, intervalMinutes, enabled: enabled ? 1 : 0 };
}

/** The target of a mirror's audit rows (docs/audit-log.md#actions). */
function mirrorAudit(projectPath: string, projectId: number, mirrorId: number) {
  return { targetType: 'mirror', targetId: mirrorId, targetName: `${projectPath}:mirror ${mirrorId}`, projectId };
}

/** A mirror's settings as an audit row holds them: whether it has a password, never the password. */
function mirrorOutline(m: Pick<RepositoryMirrorRow, 'direction' | 'url' | 'userName' | 'password' | 'intervalMinutes' | 'enabled'>) {
  return {
    direction: m.direction,
    url: m.url,
    userName: m.userName,
    hasPassword: m.password !== null,
    intervalMinutes: m.intervalMinutes,
    enabled: m.enabled === 1,
  };
}

async function mirrorRow(ctx: Context, projectId: number, mirrorId: number): Promise<RepositoryMirrorRow> {
  const row = await ctx.db.selectFrom('repositoryMirrors').selectAll().where('id', '=', mirrorId).where('projectId', '=', projectId).executeTakeFirst();
  if (!row) throw new NotFound(`Mirror not found: ${mirrorId}`);
  return row;
}

/** The mirrors of a project, pull mirror first, then push mirrors by id (manage project; 404 when not visible). */
export async function listMirrors(ctx: Context, projectId: number): Promise<MirrorView[]> {
  await loadProjectWith(ctx, projectId, 'manage');
  const rows = await ctx.db.selectFrom('repositoryMirrors').selectAll().where('projectId', '=', projectId).orderBy('direction').orderBy('id').execute();
  return rows.map((row) => toView(row, ctx.now()));
}

/** One mirror of a project (manage project; 404 for a mirror of another project). */
export async function getMirror(ctx: Context, projectId: number, mirrorId: number): Promise<MirrorView> {
  await loadProjectWith(ctx, projectId, 'manage');
  return toView(await mirrorRow(ctx, projectId, mirrorId), ctx.now());
}

/** Refuses a second pull mirror, a pull mirror over branches or tags, an eleventh push mirror. */
async function checkRoom(ctx: Context, projectId: number, direction: MirrorDirection): Promise<void> {
  const existing = await ctx.db.selectFrom('repositoryMirrors').select('id').where('projectId', '=', projectId).where('direction', '=', direction).execute();
  if (direction === 'PUSH') {
    if (existing.length >= MAX_PUSH_MIRRORS) throw invalid(`A project has at most ${MAX_PUSH_MIRRORS} push mirrors`);
    return;
  }
  if (existing.length > 0) throw new Conflict('The project already has a pull mirror', { code: 'GITLOOM_ERR_MIRROR_CONFLICT' });
  const repo = ctx.repoPath(projectId);
  if ((await listRefs(repo, 'refs/heads/')).size > 0 || (await listRefs(repo, 'refs/tags/')).size > 0) {
    throw new Conflict("A pull mirror needs a project whose repository has no branches or tags yet: the remote's would replace them", {
      code: 'GITLOOM_ERR_MIRROR_CONFLICT',
    });
  }
}

/**
 * Adds a mirror to a project (manage project): `direction` and `url` required; a pull mirror
 * needs an empty repository and is the project's only one; due at once (a push mirror's first
 * push, a pull mirror's first sync). The password is stored encrypted.
 *
 * @returns the new mirror's id.
 * @throws BadRequest (`GITLOOM_ERR_MIRROR_URL`, `GITLOOM_ERR_MIRROR_VALUE`); Conflict (`GITLOOM_ERR_MIRROR_CONFLICT`).
 */
export async function createMirror(ctx: Context, projectId: number, input: MirrorInput): Promise<number> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  const settings = await mergedSettings(ctx, input, null);
  await checkRoom(ctx, projectId, settings.direction);
  const now = ctx.now();
  try {
    const row = await ctx.db.transaction().execute(async (tx) => {
      const created = await tx
        .insertInto('repositoryMirrors')
        .values({
          projectId,
          ...settings,
          createDate: now,
          nextAttemptDate: now,
          pendingDate: settings.direction === 'PUSH' ? now : null,
          lastAttemptDate: null,
          lastSuccessDate: null,
          lastError: null,
          leaseOwner: null,
          leaseExpires: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await recordAudit(ctx, tx, { ...mirrorAudit(project.path, projectId, created.id), action: 'mirror.create', after: mirrorOutline(settings) });
      return created;
    });
    await mirrorDue(ctx, row.id);
    return row.id;
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict('The project already has a pull mirror', { cause: error, code: 'GITLOOM_ERR_MIRROR_CONFLICT' });
    if (isForeignKeyViolation(error)) throw new NotFound(`Project not found: ${projectId}`);
    throw error;
  }
}

/**
 * Changes a mirror (manage project), a partial merge: absent fields keep their value, null
 * clears. The direction never changes. A new URL of another origin drops the stored password
 * unless one is given with it. The mirror is due at once, its failures forgotten.
 *
 * @throws as {@link createMirror}; NotFound for a mirror of another project.
 */
export async function updateMirror(ctx: Context, projectId: number, mirrorId: number, input: MirrorInput): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  const stored = await mirrorRow(ctx, projectId, mirrorId);
  const settings = await mergedSettings(ctx, input, stored);
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('repositoryMirrors')
      .set({ ...settings, failureCount: 0, nextAttemptDate: now, pendingDate: stored.direction === 'PUSH' ? now : null })
      .where('id', '=', mirrorId)
      .execute();
    const changes = auditChanges(mirrorOutline(stored), mirrorOutline(settings));
    await recordAudit(ctx, tx, { ...mirrorAudit(project.path, projectId, mirrorId), action: 'mirror.update', ...changes });
  });
  await mirrorDue(ctx, mirrorId);
}

/**
 * Deletes a mirror (manage project). A pull-mirrored project becomes an ordinary one: pushes are
 * taken again. A pull mirror's staging refs a crashed sync may have left go with it.
 */
export async function deleteMirror(ctx: Context, projectId: number, mirrorId: number): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  const row = await mirrorRow(ctx, projectId, mirrorId);
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('repositoryMirrors').where('id', '=', mirrorId).execute();
    await recordAudit(ctx, tx, { ...mirrorAudit(project.path, projectId, mirrorId), action: 'mirror.delete', before: mirrorOutline(row) });
  });
  if (row.direction === 'PULL') await deleteRefsUnder(ctx.repoPath(projectId), stagingPrefix(mirrorId));
}

/**
 * "Sync now" (manage project): the mirror is due at once, whatever its backoff; a push mirror
 * pushes even when nothing changed. The sync runs in the background: its outcome shows in the
 * mirror's `lastSuccessDate` and `lastError`.
 *
 * @throws Conflict (`GITLOOM_ERR_MIRROR_CONFLICT`) for a disabled mirror.
 */
export async function syncMirrorNow(ctx: Context, projectId: number, mirrorId: number): Promise<void> {
  await loadProjectWith(ctx, projectId, 'manage');
  const row = await mirrorRow(ctx, projectId, mirrorId);
  if (!row.enabled) throw new Conflict('The mirror is disabled: enable it first', { code: 'GITLOOM_ERR_MIRROR_CONFLICT' });
  const now = ctx.now();
  await ctx.db
    .updateTable('repositoryMirrors')
    .set({ nextAttemptDate: now, pendingDate: row.direction === 'PUSH' ? now : null })
    .where('id', '=', mirrorId)
    .execute();
  await mirrorDue(ctx, mirrorId);
}

/** Whether a project has a pull mirror (enabled or not): src/domain/projects/pull-mirror-guard.ts asks it. */
export async function projectHasPullMirror(db: Context['db'], projectId: number): Promise<boolean> {
  const row = await db.selectFrom('repositoryMirrors').select('id').where('projectId', '=', projectId).where('direction', '=', 'PULL').executeTakeFirst();
  return row !== undefined;
}
