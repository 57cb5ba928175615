import fs from 'node:fs/promises';
import { sql } from 'kysely';
import { sshRootUrlOf } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { ProjectRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { initBareRepository, readCommits } from '../../git/repository.js';
import { OWNER_ROLE_ID, type Context } from '../context.js';
import { ancestorPaths, loadProjectWith, projectPermissions } from './permissions.js';
import { deny, requireUser } from '../actor.js';
import { auditChanges, recordAudit } from '../audit/index.js';
import { isUniqueViolation } from '../unique.js';
import { populateFork } from './forks.js';
import { roleExists } from '../access/index.js';

const NAME_PATTERN = /^\w[\w.-]*$/;
/** Names that would shadow server paths (docs/compatibility.md#projects-project-json "Name rules"). */
const RESERVED_NAMES = new Set(['robots.txt', 'sitemap.xml', 'sitemap.txt', 'favicon.ico', 'favicon.png', 'logo.png', 'wicket', 'projects', 'avatars']);

/**
 * Validates a project name (docs/compatibility.md#gitloom-differs-improved-behaviour): `\w[\w.-]*`, not reserved, and not ending in `.git`
 * (git clients strip that suffix, so `x.git` would clone and push project `x`). Used on create and
 * rename. Throws BadRequest.
 */
export function validateProjectName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new BadRequest('Name is required');
  if (!NAME_PATTERN.test(name)) {
    throw new BadRequest('Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot');
  }
  if (RESERVED_NAMES.has(name.toLowerCase()) || name.startsWith('~')) throw new BadRequest(`'${name}' is a reserved name`);
  if (name.toLowerCase().endsWith('.git')) throw new BadRequest(`Project name should not end with '.git': ${name}`);
  return name;
}

export interface GitPackConfig {
  windowMemory: string | null;
  packSizeLimit: string | null;
  threads: string | null;
  window: string | null;
}

/** The editable fields of Project JSON (docs/compatibility.md#projects-project-json). */
export interface ProjectData {
  name?: string;
  parentId?: number | null;
  forkedFromId?: number | null;
  description?: string | null;
  defaultRoleId?: number | null;
  codeManagement?: boolean;
  issueManagement?: boolean;
  gitPackConfig?: GitPackConfig;
  codeAnalysisSetting?: { analysisFiles: string | null };
}

const DEFAULT_PACK_CONFIG: GitPackConfig = { windowMemory: null, packSizeLimit: null, threads: null, window: null };

/** Loads a project row by id (no permission check); NotFound when missing. */
export async function getProjectRow(db: Db, projectId: number): Promise<ProjectRow> {
  const project = await db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
  if (!project) throw new NotFound(`Project not found: ${projectId}`);
  return project;
}

/** Loads a project row by id (no permission check); undefined when missing. */
export async function findProjectRow(db: Db, projectId: number): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
}

/**
 * The paths of projects by id, in one query (no permission check), for lists across projects.
 *
 * @returns project path by project id; unknown ids are absent.
 */
export async function projectPathsByIds(db: Db, ids: Iterable<number>): Promise<Map<number, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('projects').select(['id', 'path']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r.path]));
}

/**
 * The projects named by lower-cased paths, in one case-insensitive query (no permission check),
 * for references written with a project path (docs/compatibility.md#fixed-issue-references).
 *
 * @returns id and stored path by lower-cased path; unknown paths are absent.
 */
export async function projectsByLowerPaths(db: Db, paths: Iterable<string>): Promise<Map<string, { id: number; path: string }>> {
  const wanted = [...new Set(paths)];
  if (wanted.length === 0) return new Map();
  const rows = await db
    .selectFrom('projects')
    .select(['id', 'path'])
    .where((eb) => eb(eb.fn('lower', ['path']), 'in', wanted))
    .execute();
  return new Map(rows.map((p) => [p.path.toLowerCase(), p]));
}

/** The ids of every project (no permission check), for background work over all projects. */
export async function allProjectIds(db: Db): Promise<number[]> {
  return (await db.selectFrom('projects').select('id').orderBy('id').execute()).map((p) => p.id);
}

/** Finds a project by path, case-insensitively (docs/compatibility.md#projects-project-json "Path"). */
export async function findProjectByPath(db: Db, path: string): Promise<ProjectRow | undefined> {
  return db
    .selectFrom('projects')
    .selectAll()
    .where(sql`lower(path)`, '=', path.toLowerCase())
    .executeTakeFirst();
}

/**
 * The creation check of docs/compatibility.md#projects-endpoints "Create": create-children on the parent
 * (or an ancestor), or create-root-projects without a parent. A parent the caller cannot see is 404.
 */
async function checkCreatePermission(ctx: Context, parent: ProjectRow | null): Promise<void> {
  if (parent === null) {
    if (!ctx.actor.canCreateRootProjects) deny(ctx.actor, 'Not authorized to create root project');
    return;
  }
  const permissions = await projectPermissions(ctx, parent);
  if (!permissions.access) throw new NotFound(`Project not found: ${parent.id}`);
  if (!permissions.createChildren) deny(ctx.actor, `Not authorized to create project under '${parent.path}'`);
}

async function assertSiblingNameFree(db: Db, parent: ProjectRow | null, name: string, exceptId?: number): Promise<void> {
  let query = db
    .selectFrom('projects')
    .select('id')
    .where(sql`lower(name)`, '=', name.toLowerCase());
  query = parent ? query.where('parentId', '=', parent.id) : query.where('parentId', 'is', null);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  if (await query.executeTakeFirst()) throw siblingNameConflict(parent, name);
}

/** The 409 of a sibling name clash (docs/compatibility.md#projects-project-json "Name rules"). */
function siblingNameConflict(parent: ProjectRow | null, name: string, cause?: unknown): Conflict {
  return new Conflict(
    parent ? `Name '${name}' is already used by another project under '${parent.path}'` : `Name '${name}' is already used by another root project`,
    { cause },
  );
}

async function assertRoleExists(db: Db, roleId: number | null | undefined): Promise<void> {
  if (roleId == null) return;
  if (!(await roleExists(db, roleId))) {
    throw new BadRequest(`Role not found: ${roleId}`);
  }
}

async function loadParent(db: Db, parentId: number | null | undefined): Promise<ProjectRow | null> {
  if (parentId == null) return null;
  const parent = await db.selectFrom('projects').selectAll().where('id', '=', parentId).executeTakeFirst();
  if (!parent) throw new NotFound(`Project not found: ${parentId}`);
  return parent;
}

/**
 * Create (docs/compatibility.md#projects-endpoints item 12): validates the name, checks the creation permission,
 * refuses a sibling name clash (409), records the project with its path, grants the creator the
 * Project Owner role and initialises the bare repository — all or nothing. Returns the id.
 */
export async function createProject(ctx: Context, data: ProjectData): Promise<number> {
  const creatorId = requireUser(ctx.actor);
  const name = validateProjectName(data.name);
  const parent = await loadParent(ctx.db, data.parentId);
  await checkCreatePermission(ctx, parent);
  await assertRoleExists(ctx.db, data.defaultRoleId);
  if (data.forkedFromId != null) await getProjectRow(ctx.db, data.forkedFromId);
  const now = ctx.now();
  let createdPath: string | null = null;
  try {
    return await ctx.db.transaction().execute(async (tx) => {
      await assertSiblingNameFree(tx, parent, name);
      const { id } = await tx
        .insertInto('projects')
        .values({
          forkedFromId: data.forkedFromId ?? null,
          parentId: parent?.id ?? null,
          name,
          path: parent ? `${parent.path}/${name}` : name,
          description: data.description ?? null,
          createDate: now,
          defaultRoleId: data.defaultRoleId ?? null,
          codeManagement: data.codeManagement === false ? 0 : 1,
          issueManagement: data.issueManagement === false ? 0 : 1,
          gitPackConfig: JSON.stringify({ ...DEFAULT_PACK_CONFIG, ...data.gitPackConfig }),
          codeAnalysisSetting: JSON.stringify({ analysisFiles: data.codeAnalysisSetting?.analysisFiles ?? null }),
          setting: null,
          serviceDeskName: null,
          lastActivityDate: now,
          lastCommitDate: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx.insertInto('userAuthorizations').values({ projectId: id, userId: creatorId, roleId: OWNER_ROLE_ID }).execute();
      const path = parent ? `${parent.path}/${name}` : name;
      await recordAudit(ctx, tx, {
        action: 'project.create',
        targetType: 'project',
        targetId: id,
        targetName: path,
        projectId: id,
        after: { path, forkedFromId: data.forkedFromId ?? null },
      });
      createdPath = ctx.repoPath(id);
      await initBareRepository(createdPath);
      if (data.forkedFromId != null) await populateFork({ ...ctx, db: tx }, data.forkedFromId, createdPath);
      return id;
    });
  } catch (error) {
    if (createdPath) await fs.rm(createdPath, { recursive: true, force: true });
    // a concurrent create of the same name won the race after our check
    if (isUniqueViolation(error)) throw siblingNameConflict(parent, name, error);
    throw error;
  }
}

/** Get Basic Info: any caller with access (404 otherwise). */
export async function getProject(ctx: Context, projectId: number): Promise<ProjectRow> {
  return (await loadProjectWith(ctx, projectId, 'access')).project;
}

/**
 * Update Basic Info (docs/compatibility.md#projects-endpoints item 13): a partial merge. A new parent needs the
 * creation permission there and may not be the project or a descendant (409); the name must be
 * free among the new siblings (409); manage permission is required. A rename or move rewrites
 * the paths of the whole subtree in the same transaction; repositories are keyed by id and stay.
 */
export async function updateProject(ctx: Context, projectId: number, patch: ProjectData): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  const name = patch.name === undefined ? project.name : validateProjectName(patch.name);
  const parentId = patch.parentId === undefined ? project.parentId : patch.parentId;
  const parent = await loadParent(ctx.db, parentId);
  if (parentId !== project.parentId) {
    await checkCreatePermission(ctx, parent);
    if (parent && (parent.id === project.id || parent.path.startsWith(`${project.path}/`))) {
      throw new Conflict('Can not use current or descendant project as parent');
    }
  }
  await assertRoleExists(ctx.db, patch.defaultRoleId);
  if (patch.forkedFromId != null) await getProjectRow(ctx.db, patch.forkedFromId);
  const newPath = parent ? `${parent.path}/${name}` : name;
  await ctx.db
    .transaction()
    .execute(async (tx) => {
      await assertSiblingNameFree(tx, parent, name, project.id);
      await tx
        .updateTable('projects')
        .set({
          name,
          parentId,
          path: newPath,
          ...(patch.forkedFromId !== undefined && { forkedFromId: patch.forkedFromId }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(patch.defaultRoleId !== undefined && { defaultRoleId: patch.defaultRoleId }),
          ...(patch.codeManagement !== undefined && { codeManagement: patch.codeManagement ? 1 : 0 }),
          ...(patch.issueManagement !== undefined && { issueManagement: patch.issueManagement ? 1 : 0 }),
          ...(patch.gitPackConfig !== undefined && { gitPackConfig: JSON.stringify({ ...DEFAULT_PACK_CONFIG, ...patch.gitPackConfig }) }),
          ...(patch.codeAnalysisSetting !== undefined && {
            codeAnalysisSetting: JSON.stringify({ analysisFiles: patch.codeAnalysisSetting?.analysisFiles ?? null }),
          }),
        })
        .where('id', '=', project.id)
        .execute();
      const { id: _id, lastActivityDate: _a, lastCommitDate: _c, setting: _s, ...before } = project;
      const { id: _id2, lastActivityDate: _a2, lastCommitDate: _c2, setting: _s2, ...after } = await getProjectRow(tx, project.id);
      await recordAudit(ctx, tx, {
        action: 'project.update',
        targetType: 'project',
        targetId: project.id,
        targetName: newPath,
        projectId: project.id,
        ...auditChanges(before, after),
      });
      if (newPath !== project.path) {
        const prefix = `${project.path}/`;
        await tx
          .updateTable('projects')
          .set({ path: sql`${newPath + '/'} || substr(path, ${prefix.length + 1})` })
          .where(sql`substr(path, 1, ${prefix.length})`, '=', prefix)
          .execute();
      }
    })
    .catch((error: unknown) => {
      // a concurrent create or rename to the same name won the race after our check
      throw isUniqueViolation(error) ? siblingNameConflict(parent, name, error) : error;
    });
}

/**
 * Delete (docs/compatibility.md#projects-endpoints item 15): manage permission; deletes the project and its whole
 * subtree in one transaction (deepest first), discards open pull requests coming from the
 * subtree into other projects, then removes the repositories.
 */
export async function deleteProject(ctx: Context, projectId: number): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  const subtree = await ctx.db
    .selectFrom('projects')
    .select(['id', 'path'])
    .where((eb) => eb.or([eb('id', '=', project.id), eb(sql`substr(path, 1, ${project.path.length + 1})`, '=', `${project.path}/`)]))
    .execute();
  // a concurrent delete got there first
  if (subtree.length === 0) throw new NotFound(`Project not found: ${projectId}`);
  subtree.sort((a, b) => b.path.length - a.path.length);
  const ids = subtree.map((p) => p.id);
  const now = ctx.now();
  const afterCommit: (() => Promise<void>)[] = [];
  await ctx.db.transaction().execute(async (tx) => {
    await ctx.events.dispatchInTransaction('projectsDeleting', { db: tx, projectIds: ids, userId: ctx.actor.userId, date: now, afterCommit });
    for (const id of ids) await tx.deleteFrom('projects').where('id', '=', id).execute();
    const paths = subtree.map((p) => p.path);
    await recordAudit(ctx, tx, {
      action: 'project.delete',
      targetType: 'project',
      targetId: project.id,
      targetName: project.path,
      projectId: project.id,
      before: { paths },
    });
  });
  for (const step of afterCommit) await step();
  await Promise.all(ids.map((id) => fs.rm(ctx.repoPath(id), { recursive: true, force: true })));
}

/**
 * Records that refs of a project moved (a push or a merge; docs/compatibility.md#projects-query-language "Last
 * Activity Date", "Last Commit Date"): the last activity becomes now, and the last commit date
 * the newest committer date among the new branch heads when that is later than the stored one.
 * `changes` are the moved refs (`newHash` null = deleted). A deleted project is ignored.
 */
export async function recordRefsUpdated(ctx: Context, projectId: number, changes: readonly { ref: string; newHash: string | null }[]): Promise<void> {
  const heads = [...new Set(changes.flatMap((c) => (c.newHash !== null && c.ref.startsWith('refs/heads/') ? [c.newHash] : [])))];
  await ctx.db.updateTable('projects').set({ lastActivityDate: ctx.now() }).where('id', '=', projectId).execute();
  if (heads.length === 0) return;
  const commits = await readCommits(ctx.repoPath(projectId), heads);
  const newest = Math.max(...commits.map((c) => c.committer.date.getTime()));
  await ctx.db
    .updateTable('projects')
    .set({ lastCommitDate: newest })
    .where('id', '=', projectId)
    .where((eb) => eb.or([eb('lastCommitDate', 'is', null), eb('lastCommitDate', '<', newest)]))
    .execute();
}

/**
 * Clone URLs (docs/compatibility.md#projects-endpoints item 2): http from the server URL, ssh
 * from the SSH root ({@link sshRootUrlOf}: the configured one, else the server's host and the
 * port the SSH server listens on), null when SSH is off and no root is configured.
 */
export function cloneUrls(ctx: Context, project: ProjectRow): { http: string; ssh: string | null } {
  const sshRoot = sshRootUrlOf(ctx.config);
  return { http: `${ctx.config.serverUrl}/${project.path}`, ssh: sshRoot === null ? null : `${sshRoot}/${project.path}` };
}

/** Ancestors' paths, re-exported for path-based lookups. */
export { ancestorPaths };
