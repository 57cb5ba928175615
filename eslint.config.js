// The dependency rules of docs/architecture.md#dependency-rules, checked: http | ssh → domain → db | git | ci | query | wire;
// src/ops (health, metrics, backup) sits beside domain and never imports http; src/agent (the build
// agent) is a client of the server's agent protocol: ci | git | wire only, never domain | db | http | web.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const layer = (files, forbidden, more = []) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...forbidden.map((area) => ({
            group: [`**/${area}/*`, `**/${area}/**`, `**/${area}.js`],
            message: `${files[0].split('/')[1]} may not depend on src/${area} (docs/architecture.md#dependency-rules).`,
          })),
          ...more,
        ],
      },
    ],
  },
});

// Each table belongs to one domain area, which alone reads and writes it (docs/architecture.md#domain-areas):
// other modules ask the owning area through its door. The table names a query builder, `loadRow`,
// `insertMissing`, `queryByName` or `assertNameFree` is given are checked; SQL text is not.
const TABLE_OWNERS = {
  users: ['users', 'emailAddresses', 'accessTokens', 'sshKeys', 'externalIdentities'],
  auth: ['webSessions', 'signInFailures', 'totpSecrets', 'recoveryCodes', 'webauthnCredentials', 'twoFactorChallenges'],
  access: ['roles', 'groups', 'memberships'],
  settings: ['settings'],
  projects: ['projects', 'projectLabels', 'labelSpecs', 'milestones', 'numberSequences', 'userAuthorizations', 'groupAuthorizations'],
  journal: ['refJournal'],
  lfs: ['lfsObjects', 'lfsLocks'],
  issues: [
    'issues',
    'issueAuthorizations',
    'issueChanges',
    'issueComments',
    'issueCommits',
    'issueFields',
    'issueMentions',
    'issueSchedules',
    'issueVotes',
    'issueWatches',
  ],
  pulls: [
    'pullRequests',
    'pullRequestAssignments',
    'pullRequestChanges',
    'pullRequestComments',
    'pullRequestCommits',
    'pullRequestFixedIssueBacklog',
    'pullRequestFixedIssues',
    'pullRequestLabels',
    'pullRequestMentions',
    'pullRequestReviews',
    'pullRequestUpdates',
    'pullRequestWatches',
  ],
  agents: ['agentTokens', 'agents', 'agentAttributes'],
  builds: ['builds', 'buildDependences', 'buildLabels', 'buildParams', 'buildScheduleFires', 'jobTokens', 'jobCaches'],
  'code-comments': ['codeComments', 'codeCommentReplies', 'codeCommentMentions'],
  personalizations: ['userQueriesAndWatches'],
  outbox: ['outboxEvents', 'outboxAttempts', 'outboxMessages'],
  mirrors: ['repositoryMirrors'],
  notifications: ['notifications', 'notificationSettings'],
  'diff-views': ['diffViewPreferences', 'viewedFiles'],
  'code-search': ['codeSearchProjects', 'codeSearchFiles', 'codeSearchSymbols'],
  processes: ['serverProcesses'],
  audit: ['auditEvents'],
};
const QUERY_METHODS = 'selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin|mergeInto';
const TABLE_HELPERS = 'loadRow|insertMissing|insertComment|queryByName|assertNameFree|namedEntity';
/** `no-restricted-syntax` entries refusing the tables of every area but `area` (all of them when null). */
function foreignTables(area) {
  return Object.entries(TABLE_OWNERS)
    .filter(([owner]) => owner !== area)
    .flatMap(([owner, tables]) => {
      const value = `/^(${tables.join('|')})( as \\w+)?$/`;
      const message = `the tables of ${owner} are read and written by src/domain/${owner} only: ask it through its door (docs/architecture.md#domain-areas).`;
      return [
        { selector: `CallExpression[callee.property.name=/^(${QUERY_METHODS})$/][arguments.0.value=${value}]`, message },
        { selector: `CallExpression[callee.name=/^(${TABLE_HELPERS})$/][arguments.1.value=${value}]`, message },
      ];
    });
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/query/query-parser.generated.ts'] },
  // the recommended rules of ESLint and typescript-eslint
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // the web UI's client modules run in the browser
  { files: ['src/web/assets/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    rules: {
      // Kysely's builders over tables chosen at run time (ExpressionBuilder<any, any> of the query
      // languages, the personalization tables, migrations seeing the database as it was then)
      // are typed with `any` by Kysely's own convention
      '@typescript-eslint/no-explicit-any': 'off',
      // input checks refuse control characters on purpose (ref names, paths, git log values)
      'no-control-regex': 'off',
      // `{ dropped, ...rest }` leaves a field out of a copy
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  // routes call domain functions only: no SQL, git or CI work of their own; the API and the
  // pages share src/plugins, never each other (src/app.ts registers both)
  layer(['src/http/**/*.ts'], ['db', 'git', 'ci', 'web']),
  layer(['src/plugins/**/*.ts'], ['db', 'git', 'ci', 'http', 'web']),
  // git over SSH is a transport like HTTP: it authenticates and calls domain functions only
  layer(['src/ssh/**/*.ts'], ['db', 'git', 'ci', 'http', 'web']),
  // domain functions take dates as epoch milliseconds: reading the wire's date formats is the routes' work
  layer(
    ['src/domain/**/*.ts'],
    ['http'],
    [
      {
        group: ['**/wire/dates.js'],
        importNames: ['fromWireDate'],
        message: 'domain inputs are not wire formats: the route reads the date (docs/architecture.md#dependency-rules).',
      },
    ],
  ),
  layer(['src/db/**/*.ts'], ['domain', 'http']),
  layer(['src/git/**/*.ts'], ['domain', 'http']),
  layer(['src/ci/**/*.ts'], ['domain', 'http']),
  layer(['src/query/**/*.ts'], ['domain', 'http']),
  layer(['src/wire/**/*.ts'], ['domain', 'http']),
  // pages call domain functions only, like the API's routes
  layer(['src/web/**/*.ts', 'src/web/**/*.tsx'], ['db', 'git', 'ci', 'http']),
  layer(['src/ops/**/*.ts'], ['http']),
  // a build agent is a client of the agent protocol on another machine: no database, no rules,
  // no faces of the server — the executor (ci), git, the protocol (wire) and the configuration helpers only
  layer(['src/agent/**/*.ts'], ['domain', 'db', 'http', 'web', 'plugins', 'ssh', 'ops']),
  // the object store is a library: it knows nothing of the domain, its tables or its faces
  layer(['src/object-store/**/*.ts'], ['domain', 'db', 'git', 'http', 'web']),
  // table ownership: everything outside src/domain/<area>/ asks the owning area
  { files: ['src/**/*.ts', 'src/**/*.tsx'], ignores: ['src/db/migrations/**'], rules: { 'no-restricted-syntax': ['error', ...foreignTables(null)] } },
  ...Object.keys(TABLE_OWNERS).map((area) => ({
    files: [`src/domain/${area}/**/*.ts`],
    rules: { 'no-restricted-syntax': ['error', ...foreignTables(area)] },
  })),
);
