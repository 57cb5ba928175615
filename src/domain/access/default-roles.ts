/**
 * The default roles of the first boot (docs/compatibility.md#gitloom-differs-permissions-and-first-boot /
 * docs/compatibility.md#platform-first-boot).
 */
import type { Insertable } from 'kysely';
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import type { RoleTable } from '../../db/schema.js';

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

/** The four default roles, ids 1–4. */
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

/**
 * Creates the four default roles of the first boot (Project Owner, Code Writer, Code Reader,
 * Issue Reporter, ids 1–4) and resets the roles' id sequence. Run it in the first boot's
 * transaction, once (a role of those ids already there is a unique violation).
 */
export async function createDefaultRoles(db: Db): Promise<void> {
  for (const role of DEFAULT_ROLES) await db.insertInto('roles').values(role).execute();
  await dialectOf(db).resetSequence(db, 'roles');
}
