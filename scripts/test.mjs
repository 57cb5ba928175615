// The test command: typecheck, the lint (npm run lint: the layers by eslint, no import cycles by dependency-cruiser,
// the format by Prettier), then the whole suite on SQLite, then — when
// GITLOOM_TEST_DATABASE_URL names a PostgreSQL server — the database, HTTP and web tests again on PostgreSQL.
import { spawnSync } from 'node:child_process';

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
if (postgresUrl) run(`tests on PostgreSQL (${postgresUrl})`, 'npx', ['vitest', 'run', 'test/db', 'test/http', 'test/web', ...extra], process.env);
