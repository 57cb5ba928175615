import { describe, expect, it } from 'vitest';
import type { RoleRow } from '../../src/db/schema.js';
import { jobPermissions, permissionsFromRoles } from '../../src/domain/projects/permissions.js';
import { userMatches } from '../../src/domain/projects/branch-protection.js';

function role(changes: Partial<RoleRow>): RoleRow {
  return {
    id: 9,
    name: 'r',
    manageProject: 0,
    createChildren: 0,
    managePullRequests: 0,
    manageCodeComments: 0,
    codePrivilege: 'NONE',
    manageIssues: 0,
    accessConfidentialIssues: 0,
    scheduleIssues: 0,
    editableIssueFields: '{"@type":"AllIssueFields"}',
    manageBuilds: 0,
    jobPrivileges: '[]',
    ...changes,
  };
}

const jobs = (privileges: unknown[]) => role({ jobPrivileges: JSON.stringify(privileges) });

describe('job privileges (docs/compatibility.md#roles)', () => {
  it('grants by job-name pattern with excludes and the implication chain', () => {
    const r = jobs([{ jobNames: 'ci-* -ci-secret', manageJob: false, runJob: true, accessLog: false, accessibleReports: null }]);
    const p = permissionsFromRoles([r], false);
    expect(jobPermissions(p, 'ci-test', false)).toEqual({ accessBuild: true, accessLog: true, runJob: true, manageJob: false, accessibleReports: '*' });
    expect(jobPermissions(p, 'ci-secret', false).accessBuild).toBe(false);
    expect(jobPermissions(p, 'deploy', false).accessBuild).toBe(false);
  });

  it('limits reports to the accessible pattern when only build access is granted', () => {
    const p = permissionsFromRoles([jobs([{ jobNames: '*', manageJob: false, runJob: false, accessLog: false, accessibleReports: 'junit*' }])], false);
    expect(jobPermissions(p, 'any', false)).toMatchObject({ accessBuild: true, accessLog: false, runJob: false, accessibleReports: 'junit*' });
  });

  it('gives managers every job and reduces anonymous callers to access and logs', () => {
    expect(jobPermissions(permissionsFromRoles([role({ manageBuilds: 1 })], false), 'x', false).manageJob).toBe(true);
    expect(jobPermissions(permissionsFromRoles([role({ manageProject: 1 })], false), 'x', false).runJob).toBe(true);
    const anonymous = jobPermissions(permissionsFromRoles([role({ manageProject: 1 })], true), 'x', true);
    expect(anonymous).toMatchObject({ accessBuild: true, accessLog: true, runJob: false, manageJob: false });
    const runner = jobPermissions(
      permissionsFromRoles([jobs([{ jobNames: '*', manageJob: true, runJob: true, accessLog: true, accessibleReports: null }])], true),
      'x',
      true,
    );
    expect(runner).toMatchObject({ accessBuild: true, accessLog: true, runJob: false, manageJob: false });
  });
});

describe('user match of protections', () => {
  const alice = { userId: 5, name: 'alice', groups: new Set(['devs']) };
  it('matches anyone, users, groups and exceptions', () => {
    expect(userMatches('anyone', alice)).toBe(true);
    expect(userMatches('', alice)).toBe(true);
    expect(userMatches('user(bob) group(devs)', alice)).toBe(true);
    expect(userMatches('user(bob)', alice)).toBe(false);
    expect(userMatches('anyone except group(devs)', alice)).toBe(false);
    expect(userMatches('anyone except user(bob)', alice)).toBe(true);
  });
});
