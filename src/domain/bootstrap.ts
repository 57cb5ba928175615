import { randomBytes } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Config } from '../config.js';
import { dialectOf } from '../db/dialect.js';
import type { Database, RoleTable } from '../db/schema.js';
import { ROOT_ID, SYSTEM_ID, UNKNOWN_ID } from './context.js';
import { hashPassword, normalizeEmail, normalizeUserName } from './users/index.js';

const jobAll = (runJob: boolean) => JSON.stringify([{ jobNames: '*', manageJob: false, runJob, accessLog: runJob, accessibleReports: null }]);
const exceptAssignees = JSON.stringify({ '@type': 'ExcludeIssueFields', excludeFields: ['Assignees'] });
const allFields = JSON.stringify({ '@type': 'AllIssueFields' });

const NO_PRIVILEGES = {
  manageProject: 0,
  createChildren: 0,
  managePullRequests: 0,
  manageCodeComments: 0,
  manageIssues: 0,
  accessConfidentialIssues: 0,
  scheduleIssues: 0,
  manageBuilds: 0,
};

/** The four default roles of docs/compatibility.md#gitloom-differs-permissions-and-first-boot / docs/compatibility.md#platform-first-boot, ids 1–4. */
const DEFAULT_ROLES: Insertable<RoleTable>[] = (
  [
    { id: 1, name: 'Project Owner', manageProject: 1, codePrivilege: 'NONE', editableIssueFields: allFields, jobPrivileges: '[]' },
    {
      id: 2,
      name: 'Code Writer',
      codePrivilege: 'WRITE',
      scheduleIssues: 1,
      accessConfidentialIssues: 1,
      editableIssueFields: allFields,
      jobPrivileges: jobAll(true),
    },
    { id: 3, name: 'Code Reader', codePrivilege: 'READ', editableIssueFields: exceptAssignees, jobPrivileges: jobAll(false) },
    { id: 4, name: 'Issue Reporter', codePrivilege: 'NONE', editableIssueFields: exceptAssignees, jobPrivileges: jobAll(false) },
  ] satisfies Partial<Insertable<RoleTable>>[]
).map((role) => ({ ...NO_PRIVILEGES, ...role }));

/** Whether the administrator (user 1) exists, i.e. the first boot already happened. */
export async function administratorExists(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('id', '=', ROOT_ID).executeTakeFirst()) !== undefined;
}

/**
 * First boot (docs/compatibility.md#gitloom-differs-permissions-and-first-boot): creates the administrator (id 1), the system user (-1,
 * `gitloom`), the unknown user (-2) and the default roles, unless they exist. Returns the
 * generated administrator password when one had to be made (the caller prints it once).
 * Safe to run concurrently from several processes: inserts ignore existing rows.
 */
export async function bootstrap(db: Kysely<Database>, config: Config, now: number): Promise<string | null> {
  if (await db.selectFrom('users').select('id').where('id', '=', ROOT_ID).executeTakeFirst()) return null;
  const generated = config.initialUser.password ? null : randomBytes(12).toString('base64url');
  const passwordHash = await hashPassword(config.initialUser.password ?? generated!);
  let created = false;
  await db.transaction().execute(async (tx) => {
    const rootInsert = await tx
      .insertInto('users')
      .values({ id: ROOT_ID, name: normalizeUserName(config.initialUser.name), fullName: null, passwordHash, createDate: now })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    created = Number(rootInsert.numInsertedOrUpdatedRows ?? 0) > 0;
    if (!created) return;
    await tx
      .insertInto('users')
      .values([
        { id: SYSTEM_ID, name: 'gitloom', fullName: 'Gitloom', passwordHash: null, createDate: now },
        { id: UNKNOWN_ID, name: 'unknown', fullName: 'Unknown', passwordHash: null, createDate: now },
      ])
      .execute();
    await tx
      .insertInto('emailAddresses')
      .values({
        ownerId: ROOT_ID,
        value: normalizeEmail(config.initialUser.email),
        primary: 1,
        git: 1,
        verificationCode: null,
      })
      .execute();
    await tx
      .insertInto('emailAddresses')
      .values({
        ownerId: SYSTEM_ID,
        value: 'noreply@gitloom.local',
        primary: 1,
        git: 1,
        verificationCode: null,
      })
      .execute();
    for (const role of DEFAULT_ROLES) await tx.insertInto('roles').values(role).execute();
    for (const table of ['users', 'roles']) await dialectOf(tx).resetSequence(tx, table);
  });
  return created ? generated : null;
}
