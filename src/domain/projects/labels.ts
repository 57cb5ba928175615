import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { LabelSpecTable } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { namedEntity } from '../query/index.js';
import { recordAudit } from '../audit/index.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { loadProjectWith } from './permissions.js';

export type LabelSpecRow = Selectable<LabelSpecTable>;

/** LabelSpec JSON as input (docs/compatibility.md#projects-labels). */
export interface LabelSpecData {
  name?: string;
  color?: string;
}

const DEFAULT_COLOR = '#0d87e9';

function validateName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw new BadRequest('Label name is required');
  return name.trim();
}

function validateColor(color: unknown): string {
  if (typeof color !== 'string' || !/^#[0-9a-fA-F]{3,8}$/.test(color)) throw new BadRequest(`Invalid color: ${JSON.stringify(color)}`);
  return color;
}

const labelSpecs = namedEntity('Label spec', 'labelSpecs', { taken: 'Label', ignoringCase: false, auditType: 'labelSpec' });

/** Get label spec (administrators). */
export async function getLabelSpec(ctx: Context, id: number): Promise<LabelSpecRow> {
  return labelSpecs.get(ctx, id);
}

/** Query label specs (administrators): `name` case-insensitive with `*` wildcard; by name. */
export async function queryLabelSpecs(ctx: Context, name: string | undefined, offset: number, count: number): Promise<LabelSpecRow[]> {
  return labelSpecs.query(ctx, name, offset, count);
}

/** Create a label spec (administrators); the name is unique (409, docs/compatibility.md#gitloom-differs-improved-behaviour). Returns the id. */
export async function createLabelSpec(ctx: Context, data: LabelSpecData): Promise<number> {
  return labelSpecs.create(ctx, () => {
    const name = validateName(data.name);
    return { name, color: data.color === undefined ? DEFAULT_COLOR : validateColor(data.color) };
  });
}

/** Update a label spec (administrators; partial merge; unique name). */
export async function updateLabelSpec(ctx: Context, id: number, data: LabelSpecData): Promise<void> {
  const spec = await getLabelSpec(ctx, id);
  const name = data.name === undefined ? spec.name : validateName(data.name);
  const color = data.color === undefined ? spec.color : validateColor(data.color);
  await labelSpecs.update(ctx, spec, name, (tx) => tx.updateTable('labelSpecs').set({ name, color }).where('id', '=', id).execute());
}

/**
 * Delete a label spec (administrators). A spec still attached to a project, pull request or
 * build is refused with 409 naming the uses (docs/compatibility.md#gitloom-differs-errors "in use").
 */
export async function deleteLabelSpec(ctx: Context, id: number): Promise<void> {
  const spec = await getLabelSpec(ctx, id);
  await ctx.db.transaction().execute(async (tx) => {
    const uses: string[] = [];
    for (const [table, what] of [
      ['projectLabels', 'project'],
      ['pullRequestLabels', 'pull request'],
      ['buildLabels', 'build'],
    ] as const) {
      const { n } = await tx
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('specId', '=', id)
        .executeTakeFirstOrThrow();
      if (Number(n) > 0) uses.push(`${Number(n)} ${what} label(s)`);
    }
    if (uses.length > 0) throw new Conflict(`Label '${spec.name}' is still being used in below places:\n${uses.map((u) => `    -> ${u}`).join('\n')}`);
    await tx.deleteFrom('labelSpecs').where('id', '=', id).execute();
    await recordAudit(ctx, tx, { action: 'labelSpec.delete', targetType: 'labelSpec', targetId: id, targetName: spec.name, before: spec });
  });
}

/** Whether a label spec with this id exists (for attaching labels elsewhere; no permission check). */
export async function labelSpecExists(db: Db, id: number): Promise<boolean> {
  return (await db.selectFrom('labelSpecs').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** The id of the label spec with exactly this name, or null (for query languages). */
export async function labelSpecIdByName(db: Db, name: string): Promise<number | null> {
  const row = await db.selectFrom('labelSpecs').select('id').where('name', '=', name).executeTakeFirst();
  return row?.id ?? null;
}

/** Get Labels of a project (docs/compatibility.md#projects-endpoints item 8): access permission. */
export async function projectLabels(ctx: Context, projectId: number) {
  await loadProjectWith(ctx, projectId, 'access');
  return ctx.db.selectFrom('projectLabels').selectAll().where('projectId', '=', projectId).orderBy('id').execute();
}

/** Create a project label (manage project): the spec must exist (400), once per project (409). */
export async function createProjectLabel(ctx: Context, data: { projectId: number; specId: number }): Promise<number> {
  await loadProjectWith(ctx, data.projectId, 'manage');
  if (!(await ctx.db.selectFrom('labelSpecs').select('id').where('id', '=', data.specId).executeTakeFirst())) {
    throw new BadRequest(`Label spec not found: ${data.specId}`);
  }
  const message = `Project ${data.projectId} already has label ${data.specId}`;
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('projectLabels').select('id').where('projectId', '=', data.projectId).where('specId', '=', data.specId).executeTakeFirst()) {
        throw new Conflict(message);
      }
      return (await tx.insertInto('projectLabels').values(data).returning('id').executeTakeFirstOrThrow()).id;
    }),
  );
}

/** Get a project label (access to its project). */
export async function getProjectLabel(ctx: Context, id: number) {
  const row = await loadRow(ctx.db, 'projectLabels', id, 'Project label');
  await loadProjectWith(ctx, row.projectId, 'access');
  return row;
}

/** Delete a project label (manage project). */
export async function deleteProjectLabel(ctx: Context, id: number): Promise<void> {
  const row = await loadRow(ctx.db, 'projectLabels', id, 'Project label');
  await loadProjectWith(ctx, row.projectId, 'manage');
  await ctx.db.deleteFrom('projectLabels').where('id', '=', id).execute();
}
