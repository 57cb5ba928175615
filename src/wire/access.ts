import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/**
 * Wire shapes of the access-control and organisation entities (docs/compatibility.md#roles, docs/compatibility.md#authorizations, docs/compatibility.md#groups-and-memberships, docs/compatibility.md#email-addresses-and-ssh-keys,
 * docs/compatibility.md#projects-milestones, docs/compatibility.md#projects-labels): roles, groups, memberships, authorizations, SSH keys, label specs,
 * project labels and milestones (the per-user pull-request lists use the shapes of ./pulls.ts).
 */

/** `editableIssueFields`: polymorphic with `@type` first (docs/compatibility.md#roles). */
export const EditableIssueFieldsSchema = Type.Union([
  Type.Object({ '@type': Type.Literal('AllIssueFields') }, { additionalProperties: false }),
  Type.Object({ '@type': Type.Literal('NoneIssueFields') }, { additionalProperties: false }),
  Type.Object({ '@type': Type.Literal('IncludeIssueFields'), includeFields: Type.Array(Type.String()) }, { additionalProperties: false }),
  Type.Object({ '@type': Type.Literal('ExcludeIssueFields'), excludeFields: Type.Array(Type.String()) }, { additionalProperties: false }),
]);

export const JobPrivilegeSchema = Type.Object(
  {
    jobNames: Type.String(),
    manageJob: Type.Boolean(),
    runJob: Type.Boolean(),
    accessLog: Type.Boolean(),
    accessibleReports: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const CodePrivilegeSchema = Type.Union([Type.Literal('NONE'), Type.Literal('READ'), Type.Literal('WRITE')]);

/** The leading fields of Role JSON, which the role create/update body shares (reference order). */
export const RoleLeadingFields = {
  name: Type.String(),
  manageProject: Type.Boolean(),
  createChildren: Type.Boolean(),
  managePullRequests: Type.Boolean(),
  manageCodeComments: Type.Boolean(),
  codePrivilege: CodePrivilegeSchema,
  manageIssues: Type.Boolean(),
  accessConfidentialIssues: Type.Boolean(),
  scheduleIssues: Type.Boolean(),
};

/** Role JSON, fields in OneDev's order. */
export const RoleSchema = Type.Object(
  {
    id: Type.Integer(),
    ...RoleLeadingFields,
    editableIssueFields: Type.Unknown(),
    manageBuilds: Type.Boolean(),
    jobPrivileges: Type.Array(JobPrivilegeSchema),
  },
  { $id: 'Role' },
);

/** Maps a role row to Role JSON. */
export function toWireRole(row: {
  id: number;
  name: string;
  manageProject: number;
  createChildren: number;
  managePullRequests: number;
  manageCodeComments: number;
  codePrivilege: string;
  manageIssues: number;
  accessConfidentialIssues: number;
  scheduleIssues: number;
  editableIssueFields: string;
  manageBuilds: number;
  jobPrivileges: string;
}) {
  return {
    id: row.id,
    name: row.name,
    manageProject: row.manageProject === 1,
    createChildren: row.createChildren === 1,
    managePullRequests: row.managePullRequests === 1,
    manageCodeComments: row.manageCodeComments === 1,
    codePrivilege: row.codePrivilege,
    manageIssues: row.manageIssues === 1,
    accessConfidentialIssues: row.accessConfidentialIssues === 1,
    scheduleIssues: row.scheduleIssues === 1,
    editableIssueFields: JSON.parse(row.editableIssueFields) as unknown,
    manageBuilds: row.manageBuilds === 1,
    jobPrivileges: JSON.parse(row.jobPrivileges) as unknown[],
  };
}

/** Group JSON. */
export const GroupSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    administrator: Type.Boolean(),
    createRootProjects: Type.Boolean(),
    enforce2FA: Type.Boolean(),
  },
  { $id: 'Group' },
);

/** Maps a group row to Group JSON. */
export function toWireGroup(row: {
  id: number;
  name: string;
  description: string | null;
  administrator: number;
  createRootProjects: number;
  enforce2fa: number;
}) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    administrator: row.administrator === 1,
    createRootProjects: row.createRootProjects === 1,
    enforce2FA: row.enforce2fa === 1,
  };
}

/** Membership JSON `{id, userId, groupId}`. */
export const MembershipSchema = Type.Object({ id: Type.Integer(), userId: Type.Integer(), groupId: Type.Integer() });
/** Maps a membership row to its wire shape. */
export const toWireMembership = (r: { id: number; userId: number; groupId: number }) => ({ id: r.id, userId: r.userId, groupId: r.groupId });

/** UserAuthorization JSON `{id, projectId, userId, roleId}`. */
export const UserAuthorizationSchema = Type.Object({ id: Type.Integer(), projectId: Type.Integer(), userId: Type.Integer(), roleId: Type.Integer() });
/** Maps a user authorization row to its wire shape. */
export const toWireUserAuthorization = (r: { id: number; projectId: number; userId: number; roleId: number }) => ({
  id: r.id,
  projectId: r.projectId,
  userId: r.userId,
  roleId: r.roleId,
});

/** GroupAuthorization JSON `{id, projectId, groupId, roleId}`. */
export const GroupAuthorizationSchema = Type.Object({ id: Type.Integer(), projectId: Type.Integer(), groupId: Type.Integer(), roleId: Type.Integer() });
/** Maps a group authorization row to its wire shape. */
export const toWireGroupAuthorization = (r: { id: number; projectId: number; groupId: number; roleId: number }) => ({
  id: r.id,
  projectId: r.projectId,
  groupId: r.groupId,
  roleId: r.roleId,
});

/** SshKey JSON `{id, content, ownerId}` (fingerprint and creation date are not serialized). */
export const SshKeySchema = Type.Object({ id: Type.Integer(), content: Type.String(), ownerId: Type.Integer() });
/** Maps an SSH key row to its wire shape. */
export const toWireSshKey = (r: { id: number; content: string; ownerId: number }) => ({ id: r.id, content: r.content, ownerId: r.ownerId });

/** LabelSpec JSON `{id, name, color}`. */
export const LabelSpecSchema = Type.Object({ id: Type.Integer(), name: Type.String(), color: Type.String() });
/** Maps a label spec row to its wire shape. */
export const toWireLabelSpec = (r: { id: number; name: string; color: string }) => ({ id: r.id, name: r.name, color: r.color });

/** ProjectLabel JSON `{id, projectId, specId}`. */
export const ProjectLabelSchema = Type.Object({ id: Type.Integer(), projectId: Type.Integer(), specId: Type.Integer() });
/** Maps a project label row to its wire shape. */
export const toWireProjectLabel = (r: { id: number; projectId: number; specId: number }) => ({ id: r.id, projectId: r.projectId, specId: r.specId });

/** Milestone JSON (docs/compatibility.md#projects-milestones). */
export const MilestoneSchema = Type.Object(
  {
    id: Type.Integer(),
    projectId: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    startDate: Nullable(WireDate),
    dueDate: Nullable(WireDate),
    closed: Type.Boolean(),
  },
  { $id: 'Milestone' },
);

/** Maps a milestone row to Milestone JSON. */
export function toWireMilestone(r: {
  id: number;
  projectId: number;
  name: string;
  description: string | null;
  startDate: number | null;
  dueDate: number | null;
  closed: number;
}) {
  return {
    id: r.id,
    projectId: r.projectId,
    name: r.name,
    description: r.description,
    startDate: toWireDate(r.startDate),
    dueDate: toWireDate(r.dueDate),
    closed: r.closed === 1,
  };
}

/** Top contributor (docs/compatibility.md#projects-endpoints item 11). */
export const GitContributorSchema = Type.Object({
  author: Type.Object({ name: Type.String(), emailAddress: Type.String(), when: Type.Integer(), tzOffset: Type.Integer() }),
  totalContribution: Type.Object({ commits: Type.Integer(), additions: Type.Integer(), deletions: Type.Integer() }),
  dailyContributions: Type.Record(Type.String(), Type.Integer()),
});
