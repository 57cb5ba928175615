/**
 * The OneDev query languages as data: which operators, fields and sort fields each accepts.
 * One generic parser (src/query/parser.ts) reads any of them: the five entity query languages,
 * the job match language (JOB_MATCH) and the build condition language (BUILD_CONDITION).
 */

/** How a field's value is checked at parse time: dates and integers must be readable. */
export type FieldValueType = 'text' | 'date' | 'integer';

/** A field usable as `"Name" <operator> ["value"]`. */
export interface FieldDefinition {
  /** Canonical spelling, as OneDev writes it (`Last Activity Date`). */
  readonly name: string;
  /** Canonical operators the field accepts (`is`, `is since`, …). */
  readonly operators: readonly string[];
  /** Value check; `text` (the default) accepts anything non-empty. */
  readonly value?: FieldValueType;
}

/** How fields supplied at parse time (issue custom fields, build params) behave. */
export interface ExtraFieldPolicy {
  /** Operators an extra field given by name accepts. */
  readonly operators: readonly string[];
  /** Whether extra fields given by name may appear in `order by`. */
  readonly sortable: boolean;
  /**
   * Whether any field name the language does not define is an extra field, as written
   * (case kept), without being passed at parse time: build conditions name job params the
   * parser does not know. Default false (`Field not found: X`).
   */
  readonly anyName?: boolean;
}

/** Everything the parser needs to know about one query language. */
export interface LanguageDefinition {
  /** Short name, used in messages and as the key of `QUERY_LANGUAGES`. */
  readonly name: string;
  /**
   * What a text of the language is called in syntax errors (`Unexpected end of job match at
   * column 9`, `Job match is nested too deeply`); default `query`.
   */
  readonly noun?: string;
  /** Criteria that are an operator alone (`open`, `owned by me`). */
  readonly bareOperators: readonly string[];
  /** Criteria that are an operator and a quoted value (`submitted by "alice"`). */
  readonly valueOperators: readonly string[];
  /** Field operators that take no value (`"Version" is empty`, `"Assignee" is me`). */
  readonly unaryFieldOperators: readonly string[];
  /** Query fields and their operators. */
  readonly fields: readonly FieldDefinition[];
  /** Fields allowed in `order by`; empty = the language has no `order by` clause. */
  readonly sortFields: readonly string[];
  /** Whether `#123` / `123` is a criterion. */
  readonly numberCriteria: boolean;
  /** Whether `~text~` is a criterion; default true. */
  readonly fuzzyCriteria?: boolean;
  /** Kinds allowed in `fixed between <kind> "a" and <kind> "b"`; empty = form not allowed. */
  readonly fixedBetween: readonly string[];
  /** Whether `any|all "Link" matching(criteria)` is allowed. */
  readonly linkMatching: boolean;
  /** Policy for extra fields passed to the parser by name; null = only full definitions. */
  readonly extraFields: ExtraFieldPolicy | null;
}

const IS = ['is'];
const CONTAINS = ['contains'];
const SINCE_UNTIL = ['is since', 'is until'];
const COMPARE = ['is', 'is greater than', 'is less than'];

function fields(operators: readonly string[], names: readonly string[], value: FieldValueType = 'text'): FieldDefinition[] {
  return names.map((name) => ({ name, operators, value }));
}

/** docs/compatibility.md#projects-query-language (ProjectQuery). */
export const PROJECT_QUERY: LanguageDefinition = {
  name: 'projects',
  bareOperators: ['roots', 'leafs', 'fork roots', 'owned by me', 'owned by none', 'has outdated replicas', 'without enough replicas', 'missing storage'],
  valueOperators: ['owned by', 'children of', 'forks of'],
  unaryFieldOperators: [],
  fields: [
    ...fields(IS, ['Name', 'Path', 'Label', 'Service Desk Name']),
    ...fields(CONTAINS, ['Description']),
    ...fields(SINCE_UNTIL, ['Last Activity Date', 'Last Commit Date'], 'date'),
  ],
  sortFields: ['Path', 'Name', 'Service Desk Name', 'Last Activity Date', 'Last Commit Date'],
  numberCriteria: false,
  fixedBetween: [],
  linkMatching: false,
  extraFields: null,
};

/**
 * docs/compatibility.md#pull-requests-query-language (PullRequestQuery). `Close Date` is accepted with `is since` /
 * `is until` and is meant to be implemented (OneDev fails on it at run time).
 */
export const PULL_REQUEST_QUERY: LanguageDefinition = {
  name: 'pulls',
  bareOperators: [
    'open',
    'merged',
    'discarded',
    'assigned to me',
    'submitted by me',
    'commented by me',
    'to be reviewed by me',
    'requested for changes by me',
    'approved by me',
    'mentioned me',
    'someone requested for changes',
    'has pending reviews',
    'has failed builds',
    'to be verified by builds',
    'has merge conflicts',
  ],
  valueOperators: [
    'to be reviewed by',
    'assigned to',
    'approved by',
    'requested for changes by',
    'submitted by',
    'commented by',
    'mentioned',
    'includes commit',
    'includes issue',
  ],
  unaryFieldOperators: [],
  fields: [
    ...fields(COMPARE, ['Number']),
    ...fields(IS, ['Status', 'Target Project', 'Source Project', 'Target Branch', 'Source Branch', 'Label', 'Merge Strategy']),
    ...fields(CONTAINS, ['Title', 'Description', 'Comment']),
    ...fields(COMPARE, ['Comment Count'], 'integer'),
    ...fields(SINCE_UNTIL, ['Submit Date', 'Last Activity Date', 'Close Date'], 'date'),
  ],
  sortFields: ['Submit Date', 'Last Activity Date', 'Number', 'Status', 'Target Project', 'Source Project', 'Target Branch', 'Source Branch', 'Comment Count'],
  numberCriteria: true,
  fixedBetween: [],
  linkMatching: false,
  extraFields: null,
};

/**
 * docs/compatibility.md#builds-query-language (BuildQuery). Job params are extra fields passed at parse time
 * (by name: `is` and `is empty`, not sortable).
 */
export const BUILD_QUERY: LanguageDefinition = {
  name: 'builds',
  bareOperators: ['successful', 'failed', 'cancelled', 'timed out', 'waiting', 'pending', 'running', 'finished', 'submitted by me', 'cancelled by me'],
  valueOperators: ['submitted by', 'cancelled by', 'fixed issue', 'depends on', 'dependencies of', 'in pipeline of', 'ran on'],
  unaryFieldOperators: ['is empty'],
  fields: [
    ...fields(IS, ['Project', 'Job', 'Status', 'Commit', 'Label']),
    ...fields(['is', 'is empty'], ['Version', 'Branch', 'Tag', 'Pull Request']),
    ...fields(COMPARE, ['Number']),
    ...fields(SINCE_UNTIL, ['Submit Date', 'Pending Date', 'Running Date', 'Finish Date'], 'date'),
  ],
  sortFields: ['Job', 'Status', 'Number', 'Submit Date', 'Pending Date', 'Running Date', 'Finish Date', 'Project', 'Commit'],
  numberCriteria: true,
  fixedBetween: [],
  linkMatching: false,
  extraFields: { operators: ['is', 'is empty'], sortable: false },
};

/**
 * docs/compatibility.md#issues-query-language (IssueQuery): built-in fields and standalone criteria.
 * Custom fields are extra fields passed at parse time (by name: every custom-field operator
 * available through REST, sortable).
 */
export const ISSUE_QUERY: LanguageDefinition = {
  name: 'issues',
  bareOperators: ['confidential', 'submitted by me', 'commented by me', 'mentioned me'],
  valueOperators: ['submitted by', 'commented by', 'mentioned', 'fixed in commit', 'fixed in build', 'fixed in pull request', 'has any'],
  unaryFieldOperators: ['is empty', 'is me'],
  fields: [
    ...fields(IS, ['Project']),
    ...fields(COMPARE, ['Number']),
    ...fields(['is', 'is after', 'is before'], ['State']),
    ...fields(CONTAINS, ['Title', 'Description', 'Comment']),
    ...fields(SINCE_UNTIL, ['Submit Date', 'Last Activity Date'], 'date'),
    ...fields(COMPARE, ['Vote Count', 'Comment Count'], 'integer'),
    ...fields(['is', 'is empty'], ['Milestone']),
  ],
  sortFields: ['Vote Count', 'Comment Count', 'Number', 'State', 'Submit Date', 'Project', 'Last Activity Date'],
  numberCriteria: true,
  fixedBetween: ['build', 'branch', 'tag', 'commit'],
  linkMatching: true,
  extraFields: {
    operators: ['is', 'contains', 'is since', 'is until', 'is greater than', 'is less than', 'is me', 'is empty'],
    sortable: true,
  },
};

/** docs/compatibility.md#code-comments-query-language (CodeCommentQuery). */
export const CODE_COMMENT_QUERY: LanguageDefinition = {
  name: 'codeComments',
  bareOperators: ['resolved', 'unresolved', 'created by me', 'replied by me', 'mentioned me'],
  valueOperators: ['created by', 'replied by', 'mentioned', 'on commit'],
  unaryFieldOperators: [],
  fields: [
    ...fields(CONTAINS, ['Content', 'Reply']),
    ...fields(IS, ['Path']),
    ...fields(SINCE_UNTIL, ['Create Date', 'Last Activity Date'], 'date'),
    ...fields(COMPARE, ['Reply Count'], 'integer'),
  ],
  sortFields: ['Status', 'Create Date', 'Last Activity Date', 'Reply Count'],
  numberCriteria: false,
  fixedBetween: [],
  linkMatching: false,
  extraFields: null,
};

/**
 * OneDev 8.6's job match language (JobMatch.g4; `io.onedev.server.job.match.JobMatch`), as a
 * job secret's `authorization` uses it (docs/compatibility.md#projects-settings `buildSetting.jobSecrets`):
 * `on branch "main" or submitted by group "release"`, `"Project" is "a/**"`, `not(…)`,
 * parentheses; no `order by`, fuzzy or number criteria. `on branch` and `"Project" is` take
 * path wildcards, `submitted by user` a login name, `submitted by group` a group name.
 * `"Job" is` belongs to the language; a context without jobs (a secret) refuses it after parsing.
 */
export const JOB_MATCH: LanguageDefinition = {
  name: 'jobMatch',
  noun: 'job match',
  bareOperators: [],
  valueOperators: ['on branch', 'submitted by user', 'submitted by group'],
  unaryFieldOperators: [],
  fields: fields(IS, ['Project', 'Job']),
  sortFields: [],
  numberCriteria: false,
  fuzzyCriteria: false,
  fixedBetween: [],
  linkMatching: false,
  extraFields: null,
};

/**
 * The condition language of post-build actions and job retries (docs/compatibility.md#builds-build-spec
 * "Condition grammar", docs/compatibility.md#builds-lifecycle "Retry"): build statuses, `previous is
 * <status>`, `on branch "x"` (a path wildcard), `"Log" contains "t"`, and `"Param" is "v"` /
 * `"Param" is empty` for any job param (names as written; checked against the job by the
 * build spec reader). No `order by`, fuzzy or number criteria.
 */
export const BUILD_CONDITION: LanguageDefinition = {
  name: 'buildCondition',
  noun: 'condition',
  bareOperators: ['always', 'never', ...['successful', 'failed', 'cancelled', 'timed out'].flatMap((status) => [status, `previous is ${status}`])],
  valueOperators: ['on branch'],
  unaryFieldOperators: ['is empty'],
  fields: fields(CONTAINS, ['Log']),
  sortFields: [],
  numberCriteria: false,
  fuzzyCriteria: false,
  fixedBetween: [],
  linkMatching: false,
  extraFields: { operators: ['is', 'is empty'], sortable: false, anyName: true },
};

/**
 * docs/compatibility.md#build-agents "Agent query" (OneDev 8.6 `AgentQuery`): agent fields with
 * `is`, any other quoted field an attribute (`"docker" is "yes"`), the agent criteria, `~fuzzy~`
 * on the name, and `order by`. An executor's `agentQuery` allows fields and `has attribute` only
 * (checked after parsing).
 */
export const AGENT_QUERY: LanguageDefinition = {
  name: 'agents',
  bareOperators: ['online', 'offline', 'paused', 'has running builds'],
  valueOperators: ['has attribute', 'not used since', 'ever used since', 'ran build'],
  unaryFieldOperators: [],
  fields: fields(IS, ['Name', 'Ip Address', 'Os', 'Os Version', 'Os Arch']),
  sortFields: ['Name', 'Ip Address', 'Os', 'Os Version', 'Os Arch', 'Last Used Date'],
  numberCriteria: false,
  fixedBetween: [],
  linkMatching: false,
  extraFields: { operators: ['is'], sortable: false, anyName: true },
};

/** The five entity query languages by name. */
export const QUERY_LANGUAGES = {
  projects: PROJECT_QUERY,
  pulls: PULL_REQUEST_QUERY,
  builds: BUILD_QUERY,
  issues: ISSUE_QUERY,
  codeComments: CODE_COMMENT_QUERY,
} as const satisfies Record<string, LanguageDefinition>;

/** Name of one of the five built-in entity query languages. */
export type QueryLanguage = keyof typeof QUERY_LANGUAGES;
