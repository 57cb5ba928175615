import { type ExpressionBuilder, type Selectable, sql, type SqlBool } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, MilestoneTable } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { escapeLike } from '../../query/index.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { ancestorPaths, loadProjectWith } from './permissions.js';
import { likeCondition } from '../query/index.js';
import { Provided } from '../providers.js';

export type MilestoneRow = Selectable<MilestoneTable>;

/**
 * What the projects area asks of issues, the area above it (src/domain/providers.ts): how many
 * issues are scheduled on a milestone, in the caller's transaction `db`. Filled at start-up by
 * src/domain/event-handlers.ts.
 */
export const issuesScheduledOn = new Provided<(db: Db, milestoneId: number) => Promise<number>>('the number of issues scheduled on a milestone');

/** Milestone JSON as input (docs/compatibility.md#projects-milestones); dates already in epoch ms. */
export interface MilestoneData {
  projectId?: number;
  name?: string;
  description?: string | null;
  startDate?: number | null;
  dueDate?: number | null;
  closed?: boolean;
}

function validateName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw new BadRequest('Milestone name is required');
  return name.trim();
}

async function assertNameFree(db: Db, projectId: number, name: string, exceptId?: number): Promise<void> {
  let query = db.selectFrom('milestones').select('id').where('projectId', '=', projectId).where('name', '=', name);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  if (await query.executeTakeFirst()) throw new Conflict(`Milestone name already used in this project: ${name}`);
}

/** Get milestone: access to its project (404 otherwise). */
export async function getMilestone(ctx: Context, id: number): Promise<MilestoneRow> {
  const row = await loadRow(ctx.db, 'milestones', id, 'Milestone');
  await loadProjectWith(ctx, row.projectId, 'access');
  return row;
}

/** Create milestone: manage issues on `projectId`; (project, name) unique (409). Returns the id. */
export async function createMilestone(ctx: Context, data: MilestoneData): Promise<number> {
  if (data.projectId === undefined) throw new BadRequest('projectId is required');
  await loadProjectWith(ctx, data.projectId, 'manageIssues');
  const name = validateName(data.name);
  const projectId = data.projectId;
  const message = `Milestone name already used in this project: ${name}`;
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      await assertNameFree(tx, projectId, name);
      return (
        await tx
          .insertInto('milestones')
          .values({
            projectId,
            name,
            description: data.description ?? null,
            startDate: data.startDate ?? null,
            dueDate: data.dueDate ?? null,
            closed: data.closed ? 1 : 0,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    }),
  );
}

/** Update milestone (partial merge): manage issues on the project before and after; returns the id. */
export async function updateMilestone(ctx: Context, id: number, data: MilestoneData): Promise<number> {
  const row = await loadRow(ctx.db, 'milestones', id, 'Milestone');
  await loadProjectWith(ctx, row.projectId, 'manageIssues');
  const projectId = data.projectId ?? row.projectId;
  if (projectId !== row.projectId) await loadProjectWith(ctx, projectId, 'manageIssues');
  const name = data.name === undefined ? row.name : validateName(data.name);
  const message = `Milestone name already used in this project: ${name}`;
  await uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      await assertNameFree(tx, projectId, name, id);
      await tx
        .updateTable('milestones')
        .set({
          projectId,
          name,
          description: data.description === undefined ? row.description : data.description,
          startDate: data.startDate === undefined ? row.startDate : data.startDate,
          dueDate: data.dueDate === undefined ? row.dueDate : data.dueDate,
          closed: data.closed === undefined ? row.closed : data.closed ? 1 : 0,
        })
        .where('id', '=', id)
        .execute();
    }),
  );
  return id;
}

/**
 * Delete milestone: manage issues on its project. A milestone issues are still scheduled on is
 * refused with 409 (docs/compatibility.md#gitloom-differs-errors "in use").
 */
export async function deleteMilestone(ctx: Context, id: number): Promise<void> {
  const row = await loadRow(ctx.db, 'milestones', id, 'Milestone');
  await loadProjectWith(ctx, row.projectId, 'manageIssues');
  await ctx.db.transaction().execute(async (tx) => {
    const n = await issuesScheduledOn.ask(tx, id);
    if (n > 0) throw new Conflict(`Milestone '${row.name}' is still being used by ${n} issue(s)`);
    await tx.deleteFrom('milestones').where('id', '=', id).execute();
  });
}

/** Filters of Query Milestones (docs/compatibility.md#projects-endpoints item 10); dates in epoch ms, inclusive. */
export interface MilestoneFilter {
  name?: string;
  startBefore?: number;
  startAfter?: number;
  dueBefore?: number;
  dueAfter?: number;
  closed?: boolean;
}

/**
 * Query Milestones of a project and all its ancestors (access permission): `name` is a
 * case-insensitive whole-value match (literal; Gitloom does not treat `_`/`%` as wildcards);
 * date bounds inclusive. Ordered by due date, then name.
 */
export async function queryMilestones(ctx: Context, projectId: number, filter: MilestoneFilter, offset: number, count: number): Promise<MilestoneRow[]> {
  const { project } = await loadProjectWith(ctx, projectId, 'access');
  let query = ctx.db
    .selectFrom('milestones')
    .selectAll('milestones')
    .where('projectId', 'in', (eb) => eb.selectFrom('projects').select('id').where('path', 'in', ancestorPaths(project.path)));
  if (filter.name !== undefined) query = query.where(likeCondition('milestones.name', escapeLike(filter.name.toLowerCase())));
  if (filter.startBefore !== undefined) query = query.where('startDate', '<=', filter.startBefore);
  if (filter.startAfter !== undefined) query = query.where('startDate', '>=', filter.startAfter);
  if (filter.dueBefore !== undefined) query = query.where('dueDate', '<=', filter.dueBefore);
  if (filter.dueAfter !== undefined) query = query.where('dueDate', '>=', filter.dueAfter);
  if (filter.closed !== undefined) query = query.where('closed', '=', filter.closed ? 1 : 0);
  return query.orderBy('dueDate').orderBy('name').orderBy('id').offset(offset).limit(count).execute();
}

/**
 * The paths of the projects defining some milestones, in one query (no permission check), for
 * checking that an issue's milestones belong to its project hierarchy.
 *
 * @returns project path by milestone id; unknown milestones are absent.
 */
export async function milestoneProjectPaths(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('milestones')
    .innerJoin('projects', 'projects.id', 'milestones.projectId')
    .select(['milestones.id', 'projects.path'])
    .where('milestones.id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.path]));
}

/** The milestones with these ids, by id (one query, no permission check; unknown ids are left out). */
export async function milestonesByIds(db: Db, ids: readonly number[]): Promise<MilestoneRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('milestones').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

/**
 * A subquery of the ids of the milestones named `name` (case-insensitive), or of every milestone
 * when `name` is null, for a query language filtering schedules in its own statement
 * (docs/compatibility.md#issues-query-language).
 */
export function milestoneIdsNamed(eb: ExpressionBuilder<any, any>, name: string | null) {
  return (eb as ExpressionBuilder<Database, never>)
    .selectFrom('milestones')
    .select('milestones.id')
    .$if(name !== null, (q) => q.where(sql<SqlBool>`lower(milestones.name) = ${name!.toLowerCase()}`));
}
