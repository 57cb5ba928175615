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
  signInFailures: SignInFailureTable;
  pullRequests: PullRequestTable;
  pullRequestUpdates: PullRequestUpdateTable;
  pullRequestChanges: PullRequestChangeTable;
  pullRequestComments: PullRequestCommentTable;
  pullRequestReviews: PullRequestReviewTable;
  pullRequestAssignments: PullRequestAssignmentTable;
  pullRequestWatches: PullRequestWatchTable;
  pullRequestLabels: PullRequestLabelTable;
  pullRequestCommits: PullRequestCommitTable;
  pullRequestFixedIssues: PullRequestFixedIssueTable;
  pullRequestFixedIssueBacklog: PullRequestFixedIssueBacklogTable;
  sshKeys: SshKeyTable;
  labelSpecs: LabelSpecTable;
  projectLabels: ProjectLabelTable;
  milestones: MilestoneTable;
  issues: IssueTable;
  issueFields: IssueFieldTable;
  issueComments: IssueCommentTable;
  issueWatches: IssueWatchTable;
  issueVotes: IssueVoteTable;
  issueChanges: IssueChangeTable;
  issueAuthorizations: IssueAuthorizationTable;
  issueCommits: IssueCommitTable;
  issueSchedules: IssueScheduleTable;
  issueMentions: IssueMentionTable;
  pullRequestMentions: PullRequestMentionTable;
  codeCommentMentions: CodeCommentMentionTable;
  codeComments: CodeCommentTable;
  codeCommentReplies: CodeCommentReplyTable;
  issueQueryPersonalizations: WatchedQueryPersonalizationTable;
  pullRequestQueryPersonalizations: WatchedQueryPersonalizationTable;
  buildQueryPersonalizations: SubscribedQueryPersonalizationTable;
  commitQueryPersonalizations: SubscribedQueryPersonalizationTable;
  codeCommentQueryPersonalizations: QueryPersonalizationTable;
  userQueriesAndWatches: UserQueriesAndWatchesTable;
  builds: BuildTable;
  buildParams: BuildParamTable;
  buildDependences: BuildDependenceTable;
  buildLabels: BuildLabelTable;
  buildScheduleFires: BuildScheduleFireTable;
  webSessions: WebSessionTable;

  outboxEvents: OutboxEventTable;
  outboxMessages: OutboxMessageTable;
  outboxAttempts: OutboxAttemptTable;
  refJournal: RefJournalTable;
  lfsObjects: LfsObjectTable;
  lfsLocks: LfsLockTable;
  repositoryMirrors: RepositoryMirrorTable;
  codeSearchProjects: CodeSearchProjectTable;
  codeSearchFiles: CodeSearchFileTable;
  codeSearchSymbols: CodeSearchSymbolTable;
  notifications: NotificationTable;
  notificationSettings: NotificationSettingTable;
  diffViewPreferences: DiffViewPreferenceTable;
  viewedFiles: ViewedFileTable;
  agentTokens: AgentTokenTable;
  agents: AgentTable;
  agentAttributes: AgentAttributeTable;
  jobTokens: JobTokenTable;
  serverProcesses: ServerProcessTable;
  auditEvents: AuditEventTable;
  accessTokenProjects: AccessTokenProjectTable;
  accessTokenUses: AccessTokenUseTable;
  repositoryMaintenance: RepositoryMaintenanceTable;
  totpSecrets: TotpSecretTable;
  recoveryCodes: RecoveryCodeTable;
  webauthnCredentials: WebauthnCredentialTable;
  twoFactorChallenges: TwoFactorChallengeTable;
  jobCaches: JobCacheTable;
  externalIdentities: ExternalIdentityTable;
}

type Id = Generated<number>;
/** A 0/1 flag. */
export type Flag = number;

export interface UserTable {
  id: Id;
  /** Login name, stored lower-case (docs/compatibility.md#users-json-and-names). */
  name: string;
  fullName: string | null;
  /** scrypt hash, or null for users that cannot log in (system, unknown). */
  passwordHash: string | null;
  createDate: number;
  /** Counts the user's avatar changes: the version in its URL (migration 0024). */
  avatarVersion: Generated<number>;
  /** MIME type of the uploaded avatar (`image/jpeg`, `image/png`), null for the identicon. */
  avatarType: string | null;
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
  /** SHA-256 hex of the token value (docs/compatibility.md#gitloom-differs-authentication: stored hashed). */
  hash: string;
  /** The first 4 characters of the value, shown masked in listings. */
  prefix: string;
  description: string | null;
  createDate: number;
  expireDate: number | null;
  /** 1: the token reads and fetches only (migration 0032). */
  readOnly: Generated<Flag>;
  /** 1: the token reaches only the projects of `access_token_projects` (migration 0032). */
  projectsLimited: Generated<Flag>;
}

/** A project a limited access token reaches (migration 0032). */
export interface AccessTokenProjectTable {
  tokenId: number;
  projectId: number;
}

/** When, from where and by what an access token was last used (migration 0032). */
export interface AccessTokenUseTable {
  tokenId: number;
  /** Epoch ms. */
  lastUsedDate: number;
  address: string | null;
  userAgent: string | null;
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
  /** JSON: `{"@type":"AllIssueFields"}` and siblings (docs/compatibility.md#roles). */
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
  /** JSON ProjectSetting (docs/compatibility.md#projects-settings), null = defaults. */
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
/**
 * Failed password sign-ins of one subject (`account:#<user id>`, `address:<ip>`,
 * `pair:<account>|<ip>`; src/domain/auth/sign-in-limits.ts) in the current window.
 */
export interface SignInFailureTable {
  subject: string;
  /** Epoch ms of the window's first failure. */
  windowStart: number;
  failures: number;
}

export interface NumberSequenceTable {
  scopeId: number;
  kind: string;
  nextNumber: number;
}

export type PullRequestStatus = 'OPEN' | 'MERGED' | 'DISCARDED';
export type MergeStrategy = 'CREATE_MERGE_COMMIT' | 'CREATE_MERGE_COMMIT_IF_NECESSARY' | 'SQUASH_SOURCE_BRANCH_COMMITS' | 'REBASE_SOURCE_BRANCH_COMMITS';

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
  /** Merge preview (docs/compatibility.md#pull-requests-merge-strategies-and-preview); all null until computed. */
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

/** A label on a pull request (docs/compatibility.md#pull-requests-sub-entities); unique per request and spec. */
export interface PullRequestLabelTable {
  id: Id;
  requestId: number;
  specId: number;
}

/** A commit a pull request's updates brought in (for `includes commit`, docs/compatibility.md#pull-requests-query-language). */
export interface PullRequestCommitTable {
  requestId: number;
  commitHash: string;
}

/**
 * A fix reference of a pull request (docs/compatibility.md#pull-requests-fixed-issues) as the (project, number) it names,
 * by origin: the commits of its updates, its title or its description.
 */
export interface PullRequestFixedIssueTable {
  requestId: number;
  origin: 'COMMIT' | 'TITLE' | 'DESCRIPTION';
  projectId: number;
  number: number;
}

/** A pull request opened before `pull_request_fixed_issues` existed, not indexed yet. */
export interface PullRequestFixedIssueBacklogTable {
  requestId: number;
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
  /** Unique (docs/compatibility.md#gitloom-differs-improved-behaviour). */
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

/** An issue (docs/compatibility.md#issues); numbers are unique per fork-root scope. */
export interface IssueTable {
  id: Id;
  numberScopeId: number;
  number: number;
  projectId: number;
  /** State name (`Open`, `Closed`). */
  state: string;
  title: string;
  description: string | null;
  submitterId: number;
  submitDate: number;
  voteCount: number;
  commentCount: number;
  uuid: string;
  threadingReference: string | null;
  lastActivityUserId: number | null;
  lastActivityDate: number;
  lastActivityDescription: string;
  confidential: Flag;
  pinDate: number | null;
}

/** One value of an issue field; a multi-value field has one row per value. */
export interface IssueFieldTable {
  id: Id;
  issueId: number;
  name: string;
  value: string | null;
  /** `Enumeration`, `User`, `Build`, … */
  type: string;
  /** Index of a choice value in its choice list, else -1. */
  ordinal: number;
}

export interface IssueCommentTable {
  id: Id;
  issueId: number;
  userId: number;
  content: string;
  date: number;
}

export interface IssueWatchTable {
  id: Id;
  issueId: number;
  userId: number;
  watching: Flag;
}

export interface IssueVoteTable {
  id: Id;
  issueId: number;
  userId: number;
  date: number;
}

export interface IssueChangeTable {
  id: Id;
  issueId: number;
  userId: number | null;
  date: number;
  /** JSON with `@type` first. */
  data: string;
}

/** Access to one confidential issue (submitter, mentioned users). */
export interface IssueAuthorizationTable {
  id: Id;
  issueId: number;
  userId: number;
}

/** A commit of a project whose message fixes an issue (docs/compatibility.md#fixed-issue-references). */
export interface IssueCommitTable {
  id: Id;
  issueId: number;
  projectId: number;
  commitHash: string;
}

/** An issue scheduled into a milestone. */
export interface IssueScheduleTable {
  id: Id;
  issueId: number;
  milestoneId: number;
  date: number;
}

export interface IssueMentionTable {
  id: Id;
  issueId: number;
  userId: number;
}

export interface PullRequestMentionTable {
  id: Id;
  requestId: number;
  userId: number;
}

export interface CodeCommentMentionTable {
  id: Id;
  commentId: number;
  userId: number;
}

/** The compare context columns shared by code comments and replies (docs/compatibility.md#code-comments). */
export interface CompareContextColumns {
  comparePullRequestId: number | null;
  compareOldCommitHash: string;
  compareNewCommitHash: string;
  comparePathFilter: string | null;
  compareCurrentFile: string | null;
  compareWhitespaceOption: string;
}

export interface CodeCommentTable extends CompareContextColumns {
  id: Id;
  projectId: number;
  userId: number;
  content: string;
  createDate: number;
  lastActivityUserId: number | null;
  lastActivityDate: number;
  lastActivityDescription: string;
  replyCount: number;
  markCommitHash: string;
  markPath: string;
  /** 0-based rows. */
  markFromRow: number;
  markFromColumn: number;
  markToRow: number;
  markToColumn: number;
  markTabWidth: number;
  resolved: Flag;
  uuid: string;
}

export interface CodeCommentReplyTable extends CompareContextColumns {
  id: Id;
  commentId: number;
  userId: number;
  content: string;
  date: number;
}

/** A user's saved queries of one kind in one project (docs/compatibility.md#query-personalizations). */
export interface QueryPersonalizationTable {
  id: Id;
  projectId: number;
  userId: number;
  /** JSON `[{name, query}]`. */
  queries: string;
}

export interface WatchedQueryPersonalizationTable extends QueryPersonalizationTable {
  /** JSON `{key: boolean}`. */
  queryWatches: string;
}

export interface SubscribedQueryPersonalizationTable extends QueryPersonalizationTable {
  /** JSON `[key]`. */
  querySubscriptions: string;
}

/** A user's cross-project saved queries and watches (docs/compatibility.md#users-queries-and-watches). */
export interface UserQueriesAndWatchesTable {
  userId: number;
  /** JSON QueriesAndWatches. */
  data: string;
}

export type IssueRow = Selectable<IssueTable>;
export type CodeCommentRow = Selectable<CodeCommentTable>;
export type CodeCommentReplyRow = Selectable<CodeCommentReplyTable>;
export type UserRow = Selectable<UserTable>;
export type ProjectRow = Selectable<ProjectTable>;
export type NewProject = Insertable<ProjectTable>;
export type ProjectUpdate = Updateable<ProjectTable>;
export type RoleRow = Selectable<RoleTable>;
export type PullRequestRow = Selectable<PullRequestTable>;
export type PullRequestUpdateRow = Selectable<PullRequestUpdateTable>;
export type { ColumnType };

/** Build statuses (docs/compatibility.md#builds-lifecycle). */
export type BuildStatus = 'WAITING' | 'PENDING' | 'RUNNING' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT' | 'SUCCESSFUL';

/** A CI build (docs/compatibility.md#builds-json) plus the scheduler's lease and retry bookkeeping. */
export interface BuildTable {
  id: Id;
  numberScopeId: number;
  projectId: number;
  agentId: number | null;
  submitterId: number;
  cancellerId: number | null;
  jobName: string;
  jobWorkspace: string | null;
  refName: string;
  version: string | null;
  description: string | null;
  uuid: string;
  number: number;
  commitHash: string;
  status: BuildStatus;
  paused: Flag;
  submitDate: number;
  pendingDate: number | null;
  runningDate: number | null;
  finishDate: number | null;
  retryDate: number | null;
  pipeline: string;
  submitReason: string;
  requestId: number | null;
  issueId: number | null;
  /** Retries done so far. */
  retryCount: number;
  /** Id of the server process running the build. */
  leaseOwner: string | null;
  /** Epoch ms after which a RUNNING build whose owner stopped renewing counts as interrupted. */
  leaseExpires: number | null;
}

export interface BuildParamTable {
  id: Id;
  buildId: number;
  name: string;
  /** Display type name (`Text`, `Checkbox`, `Enumeration`, `Secret`, …). */
  type: string;
  value: string | null;
}

export interface BuildDependenceTable {
  id: Id;
  dependentId: number;
  dependencyId: number;
  requireSuccessful: Flag;
  artifacts: string | null;
  destinationPath: string | null;
}

export interface BuildLabelTable {
  id: Id;
  buildId: number;
  specId: number;
}

/** One claimed firing of a `!ScheduleTrigger` (unique per project, job and fire time). */
export interface BuildScheduleFireTable {
  id: Id;
  projectId: number;
  jobName: string;
  /** Epoch ms of the cron fire time. */
  fireTime: number;
}

export type BuildRow = Selectable<BuildTable>;

/** A signed-in browser (migration 0015). Times in epoch ms. */
export interface WebSessionTable {
  /** SHA-256 (hex) of the session cookie's token. */
  tokenHash: string;
  userId: number;
  /** Synchronizer token of the session's forms. */
  csrfToken: string;
  createDate: number;
  expireDate: number;
  /** Epoch ms of the last request of the session (written at most once a minute; migration 0032). */
  lastUsedDate: number | null;
  /** The client's address and `User-Agent` at that request. */
  address: string | null;
  userAgent: string | null;
}

/** An event to announce (webhooks, mails), written in the transaction that commits it (migration 0016). */
export interface OutboxEventTable {
  id: Id;
  /** Webhook event type: CODE_PUSH, PULL_REQUEST, ISSUE, CODE_COMMENT, BUILD. */
  type: string;
  /** What happened (`OPENED`, `MERGED`, `COMMENTED`, a build status, `UPDATED` for a ref …). */
  action: string;
  projectId: number;
  actorId: number | null;
  date: number;
  /** JSON `{body, watcherIds}`: the webhook body and the watchers when the event happened. */
  payload: string;
  /** When the event was expanded into messages; null while pending. */
  expandedDate: number | null;
  leaseOwner: string | null;
  leaseExpires: number | null;
}

/** One webhook delivery or mail to send (migration 0016). */
export interface OutboxMessageTable {
  id: Id;
  eventId: number | null;
  kind: 'WEBHOOK' | 'MAIL';
  /** Delivery id (`X-Gitloom-Delivery`) or mail Message-ID local part. */
  uuid: string;
  projectId: number;
  eventType: string;
  /** Webhook post URL, or the recipient's email address. */
  target: string;
  /** Webhook secret at the time of the event (null for mails). */
  secret: string | null;
  /** Webhook body, or the mail as JSON `{subject, text, html, inReplyTo}`. */
  payload: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attemptCount: number;
  createDate: number;
  /** Epoch ms of the next try while PENDING. */
  nextAttemptDate: number | null;
  finishDate: number | null;
  /** The message this one redelivers. */
  redeliveryOfId: number | null;
  leaseOwner: string | null;
  leaseExpires: number | null;
}

/** One send attempt of an outbox message. */
export interface OutboxAttemptTable {
  id: Id;
  messageId: number;
  date: number;
  durationMs: number;
  succeeded: Flag;
  /** HTTP status of a webhook response (null for mails and network errors). */
  responseStatus: number | null;
  /** The first 1000 characters of the response body (or the SMTP reply). */
  responseExcerpt: string | null;
  error: string | null;
}

export type OutboxEventRow = Selectable<OutboxEventTable>;
export type OutboxMessageRow = Selectable<OutboxMessageTable>;
export type OutboxAttemptRow = Selectable<OutboxAttemptTable>;

/** One ref change of the journal (migration 0017): an intent until `appliedDate`, then work for the journal worker. */
export interface RefJournalTable {
  id: Id;
  projectId: number;
  /** Full ref name (`refs/heads/main`). */
  ref: string;
  /** Null: the ref was created. */
  oldHash: string | null;
  /** Null: the ref was deleted. */
  newHash: string | null;
  /** The pusher or acting user; null for the system. */
  userId: number | null;
  /** The pull request a merge entry closes. */
  requestId: number | null;
  /** Epoch ms the change was recorded. */
  date: number;
  /** Epoch ms the git ref was known moved; null = an intent not yet confirmed. */
  appliedDate: number | null;
  /** Epoch ms the journal worker finished the entry. */
  processedDate: number | null;
  leaseOwner: string | null;
  leaseExpires: number | null;
  /** Passes whose reactions failed (the entry is retried until MAX_ATTEMPTS). */
  attempts: Generated<number>;
  /** Epoch ms before which a failed entry is not retried; null = due now. */
  retryDate: number | null;
}
export type RefJournalRow = Selectable<RefJournalTable>;

/** A project's reference to an object of the LFS store (docs/compatibility.md#git-lfs). */
export interface LfsObjectTable {
  projectId: number;
  /** SHA-256 of the content, 64 lower-case hex digits. */
  oid: string;
  /** Bytes. */
  size: number;
  /** Epoch ms the project first referenced it. */
  createDate: number;
}

/** A file lock of the LFS locking API (docs/compatibility.md#git-lfs). */
export interface LfsLockTable {
  id: Id;
  projectId: number;
  /** Repository-relative path of the locked file. */
  path: string;
  ownerId: number;
  /** The ref the lock was taken for (`refs/heads/main`), when the client named one. */
  refName: string | null;
  /** Epoch ms. */
  lockedAt: number;
}
export type LfsLockRow = Selectable<LfsLockTable>;

/**
 * A pull or push mirror of a project's repository (migration 0020, docs/compatibility.md#repository-mirrors),
 * with the mirror worker's lease and the outcome of its attempts. Times in epoch ms.
 */
export interface RepositoryMirrorTable {
  id: Id;
  projectId: number;
  direction: 'PULL' | 'PUSH';
  /** The remote's http(s) URL, never with credentials in it. */
  url: string;
  userName: string | null;
  /** The password or access token, encrypted (`v1:…`, src/domain/projects/secret-encryption.ts); null: none. */
  password: string | null;
  /** Minutes between two syncs of a pull mirror; null for a push mirror. */
  intervalMinutes: number | null;
  enabled: Flag;
  createDate: number;
  /** When the mirror is due; null: nothing to do (a push mirror with nothing unpushed). */
  nextAttemptDate: number | null;
  /** Push mirror: the latest ref change not pushed yet; null: none. */
  pendingDate: number | null;
  lastAttemptDate: number | null;
  lastSuccessDate: number | null;
  /** Why the last attempt failed (credentials never in it); null after a success. */
  lastError: string | null;
  /** Failed attempts since the last success (the backoff's exponent). */
  failureCount: Generated<number>;
  /** Every attempt so far. */
  attemptCount: Generated<number>;
  leaseOwner: string | null;
  leaseExpires: number | null;
}
export type RepositoryMirrorRow = Selectable<RepositoryMirrorTable>;

/** The code index's state of a project (migration 0025, docs/compatibility.md#code-search). Times in epoch ms. */
export interface CodeSearchProjectTable {
  projectId: number;
  /** The default branch commit the project's files are indexed at; null: none yet. */
  indexedCommit: string | null;
  indexDate: number | null;
  /** Since when the default branch may differ from the index; null: up to date. */
  staleDate: number | null;
  /** Why the last indexing failed; null after a success. */
  lastError: string | null;
  leaseOwner: string | null;
  leaseExpires: number | null;
}
export type CodeSearchProjectRow = Selectable<CodeSearchProjectTable>;

/** A file of a project's default branch in the code index (migration 0025). */
export interface CodeSearchFileTable {
  id: Id;
  projectId: number;
  path: string;
  blobId: string;
  /** The highlight.js language of the path, or null. */
  language: string | null;
  /** Bytes. */
  size: number;
  /** Why the text is not indexed (`binary`, `too large`, `vendored`), or null when `content` holds it. */
  skipped: string | null;
  content: string | null;
  /** Why the file's symbols are missing or cut (Universal Ctags failed or timed out, too many symbols), or null (migration 0026). */
  symbolsSkipped: string | null;
}
export type CodeSearchFileRow = Selectable<CodeSearchFileTable>;

/** A definition Universal Ctags found in a file of the code index (migration 0026, docs/compatibility.md#code-search). */
export interface CodeSearchSymbolTable {
  id: Id;
  fileId: number;
  projectId: number;
  name: string;
  /** `name` lower-cased (JavaScript's toLowerCase), ordered bytewise: exact and prefix lookups. */
  nameLower: string;
  /** Universal Ctags' kind: `function`, `class`, `method`, … */
  kind: string;
  /** 1-based. */
  line: number;
  /** The enclosing class, module, … or null. */
  scope: string | null;
  /** The highlight.js language of the file, else Universal Ctags' own lower-cased, or null. */
  language: string | null;
}
/** A user's notification of one thread (migration 0023, docs/compatibility.md#notification-inbox). */
export interface NotificationTable {
  id: Id;
  userId: number;
  projectId: number;
  /** `PullRequest`, `Issue`, `Build` or `CodeComment`. */
  subjectType: string;
  subjectId: number;
  title: string;
  /** The thread's page, a path of this server (`/<project>/~pulls/3`). */
  url: string;
  /** Why the user was told, GitHub's vocabulary (`mention`, `review_requested`, `author`, …). */
  reason: string;
  unread: Flag;
  done: Flag;
  updatedDate: number;
  lastReadDate: number | null;
}

/** Whether a reason group goes to a user's inbox and mail (migration 0023); no row: both. */
export interface NotificationSettingTable {
  userId: number;
  /** `participating`, `mentions`, `review_requests`, `watching` or `builds`. */
  reasonGroup: string;
  inbox: Flag;
  mail: Flag;
}

export type NotificationRow = Selectable<NotificationTable>;
/** A user's layout of diffs (migration 0021, docs/compatibility.md#diff-view). */
export interface DiffViewPreferenceTable {
  userId: number;
  layout: 'unified' | 'split';
}

/** A file of a pull request a user marked viewed, on the blob it had then (migration 0021). */
export interface ViewedFileTable {
  userId: number;
  requestId: number;
  path: string;
  /** The file's new blob id, or `deleted:<old blob id>` for a deleted file. */
  blobId: string;
  /** Epoch ms. */
  date: number;
}
export type ViewedFileRow = Selectable<ViewedFileTable>;

/** The credential of a build agent (migration 0027, docs/compatibility.md#build-agents). */
export interface AgentTokenTable {
  id: Id;
  /** SHA-256 of the value, hex: how a presented token is found. */
  valueHash: string;
  /** The value, encrypted as job secrets are (src/domain/projects/secret-encryption.ts). */
  encryptedValue: string;
  createDate: number;
}
export type AgentTokenRow = Selectable<AgentTokenTable>;

/** A build agent: what it reported when it last connected, and its connection (migration 0027). */
export interface AgentTable {
  id: Id;
  tokenId: number;
  name: string;
  ipAddress: string;
  osName: string;
  osVersion: string;
  osArch: string;
  cpus: number;
  /** Bytes of memory. */
  memory: number;
  /** The agent's container engine (`podman 4.3.1`), or null when it has none. */
  engine: string | null;
  temporal: Flag;
  paused: Flag;
  /** Epoch ms: the last connection or heartbeat. */
  lastUsedDate: number;
  /** Id of the agent's current connection, or null when it never connected. */
  session: string | null;
  /** Epoch ms until which the agent counts as online (renewed by its heartbeats), or null. */
  onlineUntil: number | null;
}
export type AgentRow = Selectable<AgentTable>;

/** An attribute of an agent (migration 0027). */
export interface AgentAttributeTable {
  id: Id;
  agentId: number;
  name: string;
  value: string;
}

/** The credential of one build running on an agent (migration 0027): SHA-256 of the token, hex. */
export interface JobTokenTable {
  buildId: number;
  tokenHash: string;
  agentId: number;
  /** The name of the remote executor the job runs on. */
  executor: string;
  /** Job slots it takes of that executor on the agent (1, plus one per service on docker). */
  slots: number;
}

/** A job cache kept in object storage (migration 0033, docs/compatibility.md#builds-caches). */
export interface JobCacheTable {
  id: Id;
  projectId: number;
  /** The cache's key, normalized (src/ci/job-caches.ts `normalizeCacheKey`). */
  cacheKey: string;
  /** The object holding its current archive: `caches/<project id>/<cache key>/<uuid>.tar`. */
  objectKey: string;
  /** The archive's size, bytes. */
  size: number;
  /** Epoch ms of its last restore or save. */
  usedDate: number;
}

/** A running server process (migration 0028, docs/architecture.md#start-up-recovery). */
export interface ServerProcessTable {
  /** Its id: the owner of what it leases. */
  id: string;
  host: string;
  /** `<boot id>/<pid namespace inode>`: the kernel its pid belongs to. */
  kernel: string;
  pid: number;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22). */
  startTicks: number;
  /** Epoch ms: when it registered. */
  startedAt: number;
  /** Epoch ms: its last heartbeat. */
  heartbeat: number;
}
export type ServerProcessRow = Selectable<ServerProcessTable>;

/** One security-relevant change (migration 0029, docs/audit-log.md). */
export interface AuditEventTable {
  id: Id;
  /** Epoch ms. */
  time: number;
  /** Who acted: a user id, null when nobody is known (a failed sign-in). */
  actorId: number | null;
  /** The actor's login name as it was then (or the name tried, for a failed sign-in). */
  actorName: string;
  /** The client's IP address; null for background work. */
  address: string | null;
  userAgent: string | null;
  /** A stable dotted name, e.g. `accessToken.create` (docs/audit-log.md#actions). */
  action: string;
  /** What was acted on: `user`, `project`, `accessToken`, … */
  targetType: string;
  targetId: string | null;
  /** The target's name as it was then. */
  targetName: string | null;
  /** The project the target belongs to, when it does. */
  projectId: number | null;
  /** JSON `{ before?, after? }` of what changed; never a secret's value. */
  summary: string | null;
}
export type AuditEventRow = Selectable<AuditEventTable>;

/** A repository's place in the maintenance queue (migration 0035, docs/architecture.md#repository-maintenance). */
export interface RepositoryMaintenanceTable {
  projectId: number;
  /** Epoch ms when the repository is due; null: not due. */
  dueDate: number | null;
  /** Epoch ms: the end of the last run. */
  lastRunDate: number | null;
  /** The last run's failure, null when it succeeded. */
  lastError: string | null;
  leaseOwner: string | null;
  leaseExpires: number | null;
}
export type RepositoryMaintenanceRow = Selectable<RepositoryMaintenanceTable>;
/** A user's TOTP secret (migration 0030, docs/security.md#two-factor-authentication). */
export interface TotpSecretTable {
  userId: number;
  /** RFC 4648 base32, encrypted with the server's secret key (`v1:…`, src/domain/projects/secret-encryption.ts). */
  secret: string;
  /** 0 while enrolment waits for a first code, 1 once confirmed. */
  confirmed: number;
  /** The 30-second time step of the last accepted code (none accepted: null). */
  lastStep: number | null;
  createDate: number;
}

/** A single-use recovery code, stored hashed (migration 0030). */
export interface RecoveryCodeTable {
  id: Id;
  userId: number;
  /** SHA-256 (hex) of the normalized code. */
  codeHash: string;
  usedDate: number | null;
}

/** A WebAuthn credential (security key or passkey) of a user (migration 0030). */
export interface WebauthnCredentialTable {
  id: Id;
  userId: number;
  /** The credential id, base64url. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter as last seen. */
  counter: number;
  /** Transports the authenticator named, comma-separated. */
  transports: string;
  name: string;
  createDate: number;
  lastUsedDate: number | null;
}

/** A second-factor ceremony in progress: a pending sign-in or a key registration (migration 0030). */
export interface TwoFactorChallengeTable {
  id: Id;
  /** SHA-256 (hex) of the token the browser holds. */
  tokenHash: string;
  userId: number;
  /** `sign-in` or `register`. */
  kind: string;
  /** The WebAuthn challenge given out (base64url), when one was. */
  challenge: string | null;
  /** Wrong answers given to this record. */
  failures: number;
  expireDate: number;
}
/** A user's link to an identity of an external system (migration 0031, docs/security.md#single-sign-on). */
export interface ExternalIdentityTable {
  id: Id;
  userId: number;
  /** `ldap`, or `oidc:<connector name>`. */
  provider: string;
  /** The identity there: the directory entry's DN, the ID token's `sub`. */
  subject: string;
  /** Epoch ms. */
  createDate: number;
}
