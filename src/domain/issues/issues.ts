import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Selectable } from 'kysely';
import type { Database, IssueRow, ProjectRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { authorReassignment, insertMissing } from '../entities.js';
import { autoWatchIssue, recordIssueMentions } from './issue-mentions.js';
import { forkRootId, loadProjectWith, milestoneProjectPaths, milestonesByIds, type ProjectPermissions, takeNextNumber } from '../projects/index.js';
import { deny, requireUser } from '../actor.js';
import { parseReferences, recordReferences } from './references.js';
import { canonicalState, fieldRows, INITIAL_STATE, ISSUE_FIELDS, type FieldValueRow } from './issue-setting.js';
import { findUserIdByName } from '../users/index.js';
import type { FieldUser } from '../events.js';

export const MAX_TITLE = 255;
export const MAX_CONTENT = 100_000;

/** An issue together with its project and the caller's privileges there. */
export interface LoadedIssue {
  issue: IssueRow;
  project: ProjectRow;
  permissions: ProjectPermissions;
}

/** Loads an issue row; NotFound `Issue not found: N`. */
export async function getIssueRow(db: Db, issueId: number): Promise<IssueRow> {
  const issue = await db.selectFrom('issues').selectAll().where('id', '=', issueId).executeTakeFirst();
  if (!issue) throw new NotFound(`Issue not found: ${issueId}`);
  return issue;
}

/**
 * canAccess(issue) of docs/compatibility.md#platform-permissions: project access (404 when the project is
 * invisible); a confidential issue also needs AccessConfidentialIssues or a per-issue grant
 * (submitter, mentioned users) — otherwise 401/403.
 */
export async function loadAccessibleIssue(ctx: Context, issueId: number): Promise<LoadedIssue> {
  const issue = await getIssueRow(ctx.db, issueId);
  const { project, permissions } = await loadProjectWith(ctx, issue.projectId, 'access');
  if (issue.confidential && !permissions.accessConfidentialIssues) {
    const granted =
      ctx.actor.userId !== ANONYMOUS_ID &&
      (await ctx.db.selectFrom('issueAuthorizations').select('id').where('issueId', '=', issue.id).where('userId', '=', ctx.actor.userId).executeTakeFirst());
    if (!granted) deny(ctx.actor);
  }
  return { issue, project, permissions };
}

/** canModify(issue): the submitter or an issue manager of the project (docs/compatibility.md#platform-permissions). */
function requireModify(ctx: Context, loaded: LoadedIssue): void {
  requireUser(ctx.actor);
  if (loaded.issue.submitterId !== ctx.actor.userId && !loaded.permissions.manageIssues) deny(ctx.actor);
}

function requireManage(ctx: Context, loaded: LoadedIssue): void {
  requireUser(ctx.actor);
  if (!loaded.permissions.manageIssues) deny(ctx.actor);
}

/** Records one change of an issue (`data` carries `@type` first). */
export async function recordIssueChange(db: Db, issueId: number, userId: number | null, date: number, data: Record<string, unknown>): Promise<void> {
  await db
    .insertInto('issueChanges')
    .values({ issueId, userId, date, data: JSON.stringify(data) })
    .execute();
}

async function touch(db: Db, issueId: number, userId: number | null, date: number, description: string): Promise<void> {
  await db
    .updateTable('issues')
    .set({ lastActivityUserId: userId, lastActivityDate: date, lastActivityDescription: description })
    .where('id', '=', issueId)
    .execute();
}

function checkTitle(title: unknown): string {
  const trimmed = typeof title === 'string' ? title.trim() : '';
  if (!trimmed) throw new BadRequest('Title is required');
  if (trimmed.length > MAX_TITLE) throw new BadRequest(`Title should not exceed ${MAX_TITLE} characters`);
  return trimmed;
}

function checkDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null || description === '') return null;
  if (description.length > MAX_CONTENT) throw new BadRequest('Description too long');
  return description;
}

/** Field values as `{name: value}` (multi-value fields as lists), for change records. */
function fieldMap(rows: readonly FieldValueRow[]): Record<string, string | string[]> {
  const map: Record<string, string | string[]> = {};
  for (const spec of ISSUE_FIELDS) {
    const values = rows.filter((r) => r.name === spec.name && r.value !== null).map((r) => r.value as string);
    if (values.length > 0) map[spec.name] = spec.multiple ? values : values[0];
  }
  return map;
}

async function writeFields(db: Db, issueId: number, fields: Map<string, FieldValueRow[]>): Promise<void> {
  for (const [name, rows] of fields) {
    await db.deleteFrom('issueFields').where('issueId', '=', issueId).where('name', '=', name).execute();
    if (rows.length > 0)
      await db
        .insertInto('issueFields')
        .values(rows.map((r) => ({ issueId, ...r })))
        .execute();
  }
}

/** IssueOpenData (docs/compatibility.md#issues create). */
export interface IssueOpenData {
  projectId: number;
  title: string;
  description?: string | null;
  confidential?: boolean;
  milestoneIds?: number[];
  fields?: Record<string, unknown>;
}

async function checkMilestones(db: Db, project: ProjectRow, ids: readonly number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const paths = await milestoneProjectPaths(db, unique);
  for (const id of unique) {
    const path = paths.get(id);
    if (path === undefined || !(project.path === path || project.path.startsWith(`${path}/`))) {
      throw new BadRequest('Milestone is not defined in project hierarchy of the issue');
    }
  }
  return unique;
}

/**
 * Create (docs/compatibility.md#issues, IssueManager.open): access to the project; a
 * milestone needs ScheduleIssues and must belong to the project or an ancestor (400). The issue
 * starts in the first state (`Open`) with the next number of the fork root's scope; fields are
 * validated (400) and the built-in defaults applied (Type `New Feature`, Priority `Normal`); the
 * submitter gets access to it and watches it; mentions in the description are recorded.
 * Returns the new id.
 */
export async function openIssue(ctx: Context, data: IssueOpenData): Promise<number> {
  const submitterId = requireUser(ctx.actor);
  const { project, permissions } = await loadProjectWith(ctx, data.projectId, 'access');
  const title = checkTitle(data.title);
  const description = checkDescription(data.description);
  if ((data.milestoneIds?.length ?? 0) > 0 && !permissions.scheduleIssues) deny(ctx.actor);
  const milestoneIds = await checkMilestones(ctx.db, project, data.milestoneIds ?? []);
  const input: Record<string, unknown> = {};
  for (const spec of ISSUE_FIELDS) if (spec.defaultValue !== null) input[spec.name] = spec.defaultValue;
  Object.assign(input, data.fields ?? {});
  const fields = await fieldRows(ctx.db, input);
  const numberScopeId = await forkRootId(ctx.db, project.id);
  const now = ctx.now();
  return ctx.db.transaction().execute(async (tx) => {
    const number = await takeNextNumber(tx, numberScopeId, 'issue');
    const { id } = await tx
      .insertInto('issues')
      .values({
        numberScopeId,
        number,
        projectId: project.id,
        state: INITIAL_STATE,
        title,
        description,
        submitterId,
        submitDate: now,
        voteCount: 0,
        commentCount: 0,
        uuid: randomUUID(),
        threadingReference: null,
        lastActivityUserId: submitterId,
        lastActivityDate: now,
        lastActivityDescription: 'opened',
        confidential: data.confidential ? 1 : 0,
        pinDate: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await writeFields(tx, id, fields);
    for (const milestoneId of milestoneIds) await tx.insertInto('issueSchedules').values({ issueId: id, milestoneId, date: now }).execute();
    await tx.insertInto('issueAuthorizations').values({ issueId: id, userId: submitterId }).execute();
    await autoWatchIssue(tx, id, [submitterId]);
    const fieldUsers = await watchNewFieldUsers(tx, id, [], fields);
    await recordIssueMentions(tx, id, description);
    await recordReferences(tx, { kind: 'issue', issueId: id, projectId: project.id }, submitterId, now, [
      ...parseReferences(title, 'plain'),
      ...parseReferences(description, 'markdown'),
    ]);
    await ctx.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'ISSUE', action: 'OPENED', issueId: id, fieldUsers, actorId: submitterId, date: now, text: description },
    });
    return id;
  });
}

/** Get (docs/compatibility.md#issues): canAccess(issue). */
export async function getIssue(ctx: Context, issueId: number): Promise<IssueRow> {
  return (await loadAccessibleIssue(ctx, issueId)).issue;
}

/** The rows of one of an issue's sub-tables in id order: canAccess(issue). */
async function listOfIssue<T extends 'issueFields' | 'issueChanges' | 'issueComments' | 'issueVotes' | 'issueWatches'>(
  ctx: Context,
  table: T,
  issueId: number,
): Promise<Selectable<Database[T]>[]> {
  await loadAccessibleIssue(ctx, issueId);
  return (ctx.db as any).selectFrom(table).selectAll().where('issueId', '=', issueId).orderBy('id').execute();
}

/** Sub-lists of docs/compatibility.md#issues (`/fields`, `/changes`, `/comments`, `/votes`, `/watches`): canAccess(issue), in id order. */
export async function listIssueFields(ctx: Context, issueId: number) {
  return listOfIssue(ctx, 'issueFields', issueId);
}

/** The change records of an issue, oldest first. */
export async function listIssueChanges(ctx: Context, issueId: number) {
  return listOfIssue(ctx, 'issueChanges', issueId);
}

/** The comments of an issue, oldest first. */
export async function listIssueComments(ctx: Context, issueId: number) {
  return listOfIssue(ctx, 'issueComments', issueId);
}

/** The votes of an issue. */
export async function listIssueVotes(ctx: Context, issueId: number) {
  return listOfIssue(ctx, 'issueVotes', issueId);
}

/** The watches of an issue. */
export async function listIssueWatches(ctx: Context, issueId: number) {
  return listOfIssue(ctx, 'issueWatches', issueId);
}

/** The milestones an issue is scheduled into. */
export async function listIssueMilestones(ctx: Context, issueId: number) {
  await loadAccessibleIssue(ctx, issueId);
  const schedules = await ctx.db.selectFrom('issueSchedules').select('milestoneId').where('issueId', '=', issueId).execute();
  return milestonesByIds(
    ctx.db,
    schedules.map((s) => s.milestoneId),
  );
}

/**
 * The issue numbered `number` in project `projectId` (id, project and number), or null when there
 * is none. For the query languages of the areas above (builds' `fixed issue`, pull requests'
 * `includes issue`, docs/compatibility.md#fixed-issue-references), which word their own errors.
 */
export async function findIssueAt(db: Db, projectId: number, number: number): Promise<{ id: number; projectId: number; number: number } | null> {
  return (
    (await db.selectFrom('issues').select(['id', 'projectId', 'number']).where('projectId', '=', projectId).where('number', '=', number).executeTakeFirst()) ??
    null
  );
}

/**
 * The fixing commits recorded for an issue (`issueCommits`, docs/compatibility.md#fixed-issue-references), in
 * no particular order, without permission checks: for builds' `fixed issue` criterion
 * (docs/compatibility.md#builds-query-language), which then reads only the builds the caller may see.
 */
export async function fixingCommitsOfIssue(db: Db, issueId: number): Promise<{ projectId: number; commitHash: string }[]> {
  return db.selectFrom('issueCommits').select(['projectId', 'commitHash']).where('issueId', '=', issueId).execute();
}

/**
 * How many issues are scheduled on milestone `milestoneId` (`issueSchedules`): a milestone still
 * in use is not deleted (docs/compatibility.md#gitloom-differs-errors "in use"). Answers the
 * projects area's question (src/domain/projects/milestones.ts); runs in the caller's transaction `db`.
 */
export async function countIssuesScheduledOn(db: Db, milestoneId: number): Promise<number> {
  const { n } = await db
    .selectFrom('issueSchedules')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('milestoneId', '=', milestoneId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** `/commits`: the fixing commits recorded for the issue (docs/compatibility.md#issues): ReadCode on the issue's project. */
export async function listIssueCommits(ctx: Context, issueId: number): Promise<{ projectId: number; commitHash: string }[]> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  if (!loaded.permissions.readCode) deny(ctx.actor);
  return ctx.db.selectFrom('issueCommits').select(['projectId', 'commitHash']).where('issueId', '=', issueId).orderBy('id').execute();
}

/**
 * Set Milestones (docs/compatibility.md#issues `/milestones`): ScheduleIssues; the list replaces the issue's
 * milestones, each defined in the issue's project or an ancestor (400 otherwise).
 */
export async function setIssueMilestones(ctx: Context, issueId: number, milestoneIds: readonly number[]): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireUser(ctx.actor);
  if (!loaded.permissions.scheduleIssues) deny(ctx.actor);
  const ids = await checkMilestones(ctx.db, loaded.project, milestoneIds);
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    const before = (await tx.selectFrom('issueSchedules').select('milestoneId').where('issueId', '=', issueId).execute()).map((r) => r.milestoneId);
    if (JSON.stringify([...before].sort()) === JSON.stringify([...ids].sort())) return;
    await tx.deleteFrom('issueSchedules').where('issueId', '=', issueId).execute();
    if (ids.length > 0)
      await tx
        .insertInto('issueSchedules')
        .values(ids.map((milestoneId) => ({ issueId, milestoneId, date: now })))
        .execute();
    await recordIssueChange(tx, issueId, ctx.actor.userId, now, { '@type': 'IssueMilestoneChangeData', oldMilestoneIds: before, newMilestoneIds: ids });
    await touch(tx, issueId, ctx.actor.userId, now, 'changed milestones');
  });
}

/** Set Title: canModify(issue); 1–255 characters (400). Records a title change. */
export async function setIssueTitle(ctx: Context, issueId: number, text: string): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireModify(ctx, loaded);
  const title = checkTitle(text);
  if (title === loaded.issue.title) return;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx.updateTable('issues').set({ title }).where('id', '=', issueId).execute();
    await recordIssueChange(tx, issueId, ctx.actor.userId, now, { '@type': 'IssueTitleChangeData', oldTitle: loaded.issue.title, newTitle: title });
    await touch(tx, issueId, ctx.actor.userId, now, 'changed title');
    await recordReferences(tx, { kind: 'issue', issueId, projectId: loaded.issue.projectId }, ctx.actor.userId, now, parseReferences(title, 'plain'));
  });
}

/** Set Description: canModify(issue); at most 100000 characters (400); empty clears. Mentions are recorded. */
export async function setIssueDescription(ctx: Context, issueId: number, text: string): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireModify(ctx, loaded);
  const description = checkDescription(text);
  if (description === loaded.issue.description) return;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx.updateTable('issues').set({ description }).where('id', '=', issueId).execute();
    await recordIssueChange(tx, issueId, ctx.actor.userId, now, {
      '@type': 'IssueDescriptionChangeData',
      oldDescription: loaded.issue.description,
      newDescription: description,
    });
    await touch(tx, issueId, ctx.actor.userId, now, 'changed description');
    await recordIssueMentions(tx, issueId, description);
    await recordReferences(tx, { kind: 'issue', issueId, projectId: loaded.issue.projectId }, ctx.actor.userId, now, parseReferences(description, 'markdown'));
  });
}

/** Set Confidential: canModify(issue). */
export async function setIssueConfidential(ctx: Context, issueId: number, confidential: boolean): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireModify(ctx, loaded);
  if (Boolean(loaded.issue.confidential) === confidential) return;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('issues')
      .set({ confidential: confidential ? 1 : 0 })
      .where('id', '=', issueId)
      .execute();
    await recordIssueChange(tx, issueId, ctx.actor.userId, now, {
      '@type': 'IssueConfidentialChangeData',
      oldConfidential: !confidential,
      newConfidential: confidential,
    });
    await touch(tx, issueId, ctx.actor.userId, now, 'changed confidential');
  });
}

async function currentFields(db: Db, issueId: number): Promise<FieldValueRow[]> {
  return db.selectFrom('issueFields').select(['name', 'value', 'type', 'ordinal']).where('issueId', '=', issueId).orderBy('id').execute();
}

/**
 * Users newly put in user fields (OneDev's `getNewUsers` of a field change): they watch the issue
 * (docs/compatibility.md#issue-watches-and-votes auto-watch), may see it when it is confidential
 * (as OneDev's IssueNotificationManager authorizes them), and are returned with their field, to
 * be told (docs/compatibility.md#mentions-and-notifications). Unknown logins are left out.
 */
async function watchNewFieldUsers(db: Db, issueId: number, before: readonly FieldValueRow[], fields: Map<string, FieldValueRow[]>): Promise<FieldUser[]> {
  const added: FieldUser[] = [];
  for (const rows of fields.values()) {
    for (const row of rows) {
      if (row.type !== 'User' || !row.value || before.some((b) => b.name === row.name && b.value === row.value)) continue;
      const userId = await findUserIdByName(db, row.value);
      if (userId !== undefined) added.push({ field: row.name, userId });
    }
  }
  if (added.length === 0) return added;
  const userIds = [...new Set(added.map((a) => a.userId))];
  await insertMissing(
    db,
    'issueAuthorizations',
    userIds.map((userId) => ({ issueId, userId })),
    ['issueId', 'userId'],
  );
  await autoWatchIssue(db, issueId, userIds);
  return added;
}

/**
 * Set Fields (docs/compatibility.md#issues `/fields`): ManageIssues; `{name: value}` replaces the named
 * fields (null or [] clears one); unknown names and invalid values are 400. Records a change.
 */
export async function setIssueFields(ctx: Context, issueId: number, input: Record<string, unknown>): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireManage(ctx, loaded);
  const fields = await fieldRows(ctx.db, input);
  if (fields.size === 0) return;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    const before = await currentFields(tx, issueId);
    await writeFields(tx, issueId, fields);
    const after = await currentFields(tx, issueId);
    if (JSON.stringify(fieldMap(before)) === JSON.stringify(fieldMap(after))) return;
    await recordIssueChange(tx, issueId, ctx.actor.userId, now, { '@type': 'IssueFieldChangeData', oldFields: fieldMap(before), newFields: fieldMap(after) });
    await touch(tx, issueId, ctx.actor.userId, now, 'changed fields');
    const fieldUsers = await watchNewFieldUsers(tx, issueId, before, fields);
    await ctx.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'ISSUE', action: 'FIELDS_CHANGED', issueId, fieldUsers, actorId: ctx.actor.userId, date: now },
    });
  });
}

/** A state transition request (docs/compatibility.md#issues `/state-transitions`). */
export interface StateTransitionData {
  state: string;
  fields?: Record<string, unknown>;
  removeFields?: string[];
  comment?: string | null;
}

/**
 * Transits an issue to another state (docs/compatibility.md#issues): ManageIssues; the state must be a
 * defined one (400 `Undefined state: X`) and differ from the current one (409 `Issue is
 * already <state>`); fields are set, `removeFields` cleared, and a comment, when given, is added
 * (counted, mentions recorded). Records an IssueStateChangeData change.
 */
export async function transitIssueState(ctx: Context, issueId: number, data: StateTransitionData): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireManage(ctx, loaded);
  const state = canonicalState(data.state);
  if (state === loaded.issue.state) throw new Conflict(`Issue is already ${state.toLowerCase()}`);
  const input: Record<string, unknown> = { ...(data.fields ?? {}) };
  for (const name of data.removeFields ?? []) input[name] = null;
  const fields = await fieldRows(ctx.db, input);
  const comment = data.comment?.trim() ? data.comment : null;
  if (comment && comment.length > MAX_CONTENT) throw new BadRequest('Comment too long');
  await changeState(ctx, loaded.issue, state, ctx.actor.userId, ctx.now(), { fields, comment });
}

/**
 * Moves an issue to `state` inside one transaction, guarded against concurrent changes (the
 * update applies only if the state is still the one read). Used by transitions and by fixing
 * commits reaching the default branch. Returns whether the state changed.
 */
export async function changeState(
  ctx: Pick<Context, 'db' | 'events'>,
  issue: IssueRow,
  state: string,
  userId: number | null,
  now: number,
  extra: { fields?: Map<string, FieldValueRow[]>; comment?: string | null; reason?: string } = {},
): Promise<boolean> {
  const run = async (tx: Db): Promise<boolean> => {
    const done = await tx.updateTable('issues').set({ state }).where('id', '=', issue.id).where('state', '=', issue.state).executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) throw new Conflict('Issue state was changed concurrently');
    const before = await currentFields(tx, issue.id);
    if (extra.fields) await writeFields(tx, issue.id, extra.fields);
    const after = await currentFields(tx, issue.id);
    await recordIssueChange(tx, issue.id, userId, now, {
      '@type': 'IssueStateChangeData',
      oldState: issue.state,
      newState: state,
      oldFields: fieldMap(before),
      newFields: fieldMap(after),
      comment: extra.comment ?? null,
      ...(extra.reason ? { reason: extra.reason } : {}),
    });
    await touch(tx, issue.id, userId, now, `changed state to "${state}"`);
    const fieldUsers = extra.fields ? await watchNewFieldUsers(tx, issue.id, before, extra.fields) : [];
    if (extra.comment && userId !== null && userId > 0) {
      await tx.insertInto('issueComments').values({ issueId: issue.id, userId, content: extra.comment, date: now }).execute();
      await tx
        .updateTable('issues')
        .set((eb) => ({ commentCount: eb('commentCount', '+', 1) }))
        .where('id', '=', issue.id)
        .execute();
      await recordIssueMentions(tx, issue.id, extra.comment);
      await recordReferences(tx, { kind: 'issue', issueId: issue.id, projectId: issue.projectId }, userId, now, parseReferences(extra.comment, 'markdown'));
    }
    if (userId !== null) await autoWatchIssue(tx, issue.id, [userId]);
    await ctx.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'ISSUE', action: 'STATE_CHANGED', issueId: issue.id, fieldUsers, actorId: userId, date: now, text: extra.comment },
    });
    return true;
  };
  return ctx.db.transaction().execute(run);
}

/** Delete (docs/compatibility.md#issues): ManageIssues; cascades comments, watches, votes, fields, changes, mentions. */
export async function deleteIssue(ctx: Context, issueId: number): Promise<void> {
  const loaded = await loadAccessibleIssue(ctx, issueId);
  requireManage(ctx, loaded);
  await ctx.db.deleteFrom('issues').where('id', '=', issueId).execute();
}

/** A deleted user's issues, their comments and changes go to the unknown user (the `userDeleting` reaction, docs/compatibility.md#users-deletion). */
export const reassignIssueAuthors = authorReassignment({ issues: ['submitterId', 'lastActivityUserId'], issueComments: ['userId'], issueChanges: ['userId'] });
