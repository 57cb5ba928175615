import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The database, table by table. Columns are camelCase here and snake_case in SQL
 * (Kysely's CamelCasePlugin). Conventions shared by both engines:
 * - ids are 32-bit integers (`serial` on PostgreSQL, `integer … autoincrement` on SQLite);
 * - dates are epoch milliseconds in `bigint` columns (`number` in TypeScript);
 * - booleans are `integer` 0/1;
 * - structured values (settings, role privilege lists) are JSON text.
 */
export interface Database {
  users: UserTable;
  emailAddresses: EmailAddressTable;
  accessTokens: AccessTokenTable;
  settings: SettingTable;
  roles: RoleTable;
  groups: GroupTable;
  memberships: MembershipTable;
  projects: ProjectTable;
  userAuthorizations: UserAuthorizationTable;
  groupAuthorizations: GroupAuthorizationTable;
  numberSequences: NumberSequenceTable;
  pullRequests: PullRequestTable;
  pullRequestUpdates: PullRequestUpdateTable;
  pullRequestChanges: PullRequestChangeTable;
  pullRequestComments: PullRequestCommentTable;
  pullRequestReviews: PullRequestReviewTable;
  pullRequestAssignments: PullRequestAssignmentTable;
  pullRequestWatches: PullRequestWatchTable;
  sshKeys: SshKeyTable;
  labelSpecs: LabelSpecTable;
  projectLabels: ProjectLabelTable;
  milestones: MilestoneTable;
}

type Id = Generated<number>;
/** A 0/1 flag. */
export type Flag = number;

export interface UserTable {
  id: Id;
  /** Login name, stored lower-case (reference/users-roles.md §1). */
  name: string;
  fullName: string | null;
  /** scrypt hash, or null for users that cannot log in (system, unknown). */
  passwordHash: string | null;
  createDate: number;
}

export interface EmailAddressTable {
  id: Id;
  ownerId: number;
  /** Stored lower-case, globally unique. */
  value: string;
  primary: Flag;
  git: Flag;
  /** null = verified. */
  verificationCode: string | null;
}

export interface AccessTokenTable {
  id: Id;
  ownerId: number;
  /** SHA-256 hex of the token value (CONTRACT §5: stored hashed). */
  hash: string;
  /** The first 4 characters of the value, shown masked in listings. */
  prefix: string;
  description: string | null;
  createDate: number;
  expireDate: number | null;
}

export interface SettingTable {
  key: string;
  /** JSON text. */
  value: string;
}

export interface RoleTable {
  id: Id;
  name: string;
  manageProject: Flag;
  createChildren: Flag;
  managePullRequests: Flag;
  manageCodeComments: Flag;
  codePrivilege: 'NONE' | 'READ' | 'WRITE';
  manageIssues: Flag;
  accessConfidentialIssues: Flag;
  scheduleIssues: Flag;
  /** JSON: `{"@type":"AllIssueFields"}` and siblings (reference/users-roles.md §3). */
  editableIssueFields: string;
  manageBuilds: Flag;
  /** JSON: JobPrivilege[]. */
  jobPrivileges: string;
}

export interface GroupTable {
  id: Id;
  name: string;
  description: string | null;
  administrator: Flag;
  createRootProjects: Flag;
  enforce2fa: Flag;
}

export interface MembershipTable {
  id: Id;
  userId: number;
  groupId: number;
}

export interface ProjectTable {
  id: Id;
  forkedFromId: number | null;
  parentId: number | null;
  name: string;
  /** `parent.path + "/" + name`, recomputed for the subtree on rename or move. */
  path: string;
  description: string | null;
  createDate: number;
  defaultRoleId: number | null;
  codeManagement: Flag;
  issueManagement: Flag;
  /** JSON `{windowMemory, packSizeLimit, threads, window}`. */
  gitPackConfig: string;
  /** JSON `{analysisFiles}`. */
  codeAnalysisSetting: string;
  /** JSON ProjectSetting (reference/projects.md §3), null = defaults. */
  setting: string | null;
  serviceDeskName: string | null;
  lastActivityDate: number;
  lastCommitDate: number | null;
}

export interface UserAuthorizationTable {
  id: Id;
  projectId: number;
  userId: number;
  roleId: number;
}

export interface GroupAuthorizationTable {
  id: Id;
  projectId: number;
  groupId: number;
  roleId: number;
}

/** Per fork-root number counters (pull requests, issues, builds share the scope rule). */
export interface NumberSequenceTable {
  scopeId: number;
  kind: string;
  nextNumber: number;
}

export type PullRequestStatus = 'OPEN' | 'MERGED' | 'DISCARDED';
export type MergeStrategy =
  | 'CREATE_MERGE_COMMIT'
  | 'CREATE_MERGE_COMMIT_IF_NECESSARY'
  | 'SQUASH_SOURCE_BRANCH_COMMITS'
  | 'REBASE_SOURCE_BRANCH_COMMITS';

export interface PullRequestTable {
  id: Id;
  numberScopeId: number;
  number: number;
  status: PullRequestStatus;
  title: string;
  description: string | null;
  submitterId: number;
  targetProjectId: number;
  targetBranch: string;
  sourceProjectId: number | null;
  sourceBranch: string;
  baseCommitHash: string;
  buildCommitHash: string | null;
  submitDate: number;
  mergeStrategy: MergeStrategy;
  uuid: string;
  commentCount: number;
  lastActivityUserId: number | null;
  lastActivityDate: number;
  lastActivityDescription: string;
  codeCommentsUpdateDate: number | null;
  checkError: string | null;
  closeDate: number | null;
  /** Merge preview (reference/pulls.md §4); all null until computed. */
  previewTargetHeadCommitHash: string | null;
  previewHeadCommitHash: string | null;
  previewMergeStrategy: MergeStrategy | null;
  previewMergeCommitHash: string | null;
}

export interface PullRequestUpdateTable {
  id: Id;
  requestId: number;
  headCommitHash: string;
  targetHeadCommitHash: string;
  date: number;
}

export interface PullRequestChangeTable {
  id: Id;
  requestId: number;
  userId: number | null;
  date: number;
  /** JSON with `@type` first. */
  data: string;
}

export interface PullRequestCommentTable {
  id: Id;
  requestId: number;
  userId: number;
  content: string;
  date: number;
}

export type ReviewStatus = 'PENDING' | 'APPROVED' | 'REQUESTED_FOR_CHANGES' | 'EXCLUDED';

export interface PullRequestReviewTable {
  id: Id;
  requestId: number;
  userId: number;
  status: ReviewStatus;
  statusDate: number;
}

export interface PullRequestAssignmentTable {
  id: Id;
  requestId: number;
  userId: number;
}

export interface PullRequestWatchTable {
  id: Id;
  requestId: number;
  userId: number;
  watching: Flag;
}

export interface SshKeyTable {
  id: Id;
  ownerId: number;
  /** The OpenSSH public key line as given. */
  content: string;
  /** `SHA256:<base64>` of the key blob, globally unique. */
  fingerprint: string;
  createdAt: number;
}

export interface LabelSpecTable {
  id: Id;
  /** Unique (CONTRACT.md §8). */
  name: string;
  color: string;
}

export interface ProjectLabelTable {
  id: Id;
  projectId: number;
  specId: number;
}

export interface MilestoneTable {
  id: Id;
  projectId: number;
  name: string;
  description: string | null;
  startDate: number | null;
  dueDate: number | null;
  closed: Flag;
}

export type UserRow = Selectable<UserTable>;
export type ProjectRow = Selectable<ProjectTable>;
export type NewProject = Insertable<ProjectTable>;
export type ProjectUpdate = Updateable<ProjectTable>;
export type RoleRow = Selectable<RoleTable>;
export type PullRequestRow = Selectable<PullRequestTable>;
export type PullRequestUpdateRow = Selectable<PullRequestUpdateTable>;
export type { ColumnType };
