// The test command: typecheck, the lint (npm run lint: the layers by eslint, no import cycles by dependency-cruiser,
// the format by Prettier), then the whole suite on SQLite, then — when GITLOOM_TEST_DATABASE_URL
// names a PostgreSQL server — the tests of what differs on PostgreSQL again on it (POSTGRES_TESTS).
// `GITLOOM_TEST_DATABASE_URL=… npx vitest run` runs every test file on PostgreSQL.
import { spawnSync } from 'node:child_process';

/**
 * The test files run again on PostgreSQL: the database layer, what only PostgreSQL does (several
 * processes on one database, NOTIFY, outages of a database server, pg_dump backups), and what
 * src/db/dialect.ts writes per engine — row claims (schedulers, agent leases, executors' slots),
 * path subtrees (project queries), text search (pull request, issue and code search), sequences
 * (restore) — with the query languages compiled to SQL and the permission checks of every role.
 * The rest of the suite goes through the same Kysely queries on both engines and runs on SQLite.
 */
const POSTGRES_TESTS = [
  'test/db/',
  'test/http/access-matrix.test.ts',
  'test/http/agent-protocol.test.ts',
  'test/http/audit-log.test.ts',
  'test/http/backup.test.ts',
  'test/http/build-query-commit.test.ts',
  'test/http/builds-containers.test.ts',
  'test/http/builds-executors.test.ts',
  'test/http/builds-lifecycle.test.ts',
  'test/http/cluster.test.ts',
  'test/http/database-outage.test.ts',
  'test/http/issues.test.ts',
  'test/http/notification-inbox.test.ts',
  'test/http/outbox-restart.test.ts',
  'test/http/pg-coordination.test.ts',
  'test/http/process-recovery.test.ts',
  'test/http/project-query.test.ts',
  'test/http/projects.test.ts',
  'test/http/pulls-query.test.ts',
  'test/web/code-search.test.ts',
];

function run(label, command, args, env) {
  console.log(`\n=== ${label} ===`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const extra = process.argv.slice(2);
const { GITLOOM_TEST_DATABASE_URL: postgresUrl, ...sqliteEnv } = process.env;
run('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit'], process.env);
run('lint', 'npm', ['run', 'lint'], process.env);
run('tests on SQLite', 'npx', ['vitest', 'run', ...extra], sqliteEnv);
if (postgresUrl) run(`tests on PostgreSQL (${postgresUrl})`, 'npx', ['vitest', 'run', ...POSTGRES_TESTS, ...extra], process.env);
