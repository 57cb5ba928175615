/**
 * Server-side git hooks (ARCHITECTURE.md "The two main flows" #2): a pre-receive hook that asks
 * the running server, over loopback with a per-process secret, whether the pushed ref updates
 * are allowed, and prints the reasons when they are not. The hooks live in one directory under
 * the data dir and reach receive-pack through `core.hooksPath` given in the environment, so no
 * repository carries its own copy.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gitDir, runGit, value } from './command.js';
import { isObjectId, ZERO_HASH } from './names.js';

/** Environment variables the hook reads (set by the server for each push). */
export const HOOK_ENV = {
  url: 'GITLOOM_HOOK_URL',
  secret: 'GITLOOM_HOOK_SECRET',
  projectId: 'GITLOOM_HOOK_PROJECT_ID',
  userId: 'GITLOOM_HOOK_USER_ID',
} as const;

/** The header carrying the per-process secret on the hook's request. */
export const HOOK_SECRET_HEADER = 'x-gitloom-hook-secret';

/** Quarantine variables receive-pack gives its hooks; forwarded so the server sees the new objects. */
export const QUARANTINE_ENV = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'] as const;

const HOOK_PROGRAM = `// Gitloom pre-receive hook: forwards the ref updates to the server and reports its verdict.
import { readFileSync } from 'node:fs';
const env = process.env;
const input = readFileSync(0, 'utf8');
const updates = input.split('\\n').filter(Boolean).map((line) => {
  const [oldHash, newHash, ref] = line.split(' ');
  return { oldHash, newHash, ref };
});
const quarantine = {};
for (const key of ${JSON.stringify(QUARANTINE_ENV)}) if (env[key]) quarantine[key] = env[key];
try {
  const response = await fetch(env.${HOOK_ENV.url}, {
    method: 'POST',
    headers: { 'content-type': 'application/json', '${HOOK_SECRET_HEADER}': env.${HOOK_ENV.secret} ?? '' },
    body: JSON.stringify({ projectId: Number(env.${HOOK_ENV.projectId}), userId: Number(env.${HOOK_ENV.userId}), updates, quarantine }),
  });
  if (!response.ok) throw new Error('server answered ' + response.status);
  const { errors } = await response.json();
  if (errors.length > 0) {
    process.stderr.write('\\n' + errors.map((e) => '*** PUSH REJECTED: ' + e + ' ***').join('\\n') + '\\n\\n');
    process.exit(1);
  }
} catch (error) {
  process.stderr.write('*** PUSH REJECTED: unable to verify branch protection (' + error.message + ') ***\\n');
  process.exit(1);
}
`;

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Writes the hook directory: `pre-receive` (a shell wrapper running `nodePath` on the program)
 * and `pre-receive.mjs`. Idempotent; call at startup.
 *
 * @param dir absolute directory for the hooks (e.g. `<data dir>/hooks`).
 * @param nodePath the Node binary the hook runs with (`process.execPath`).
 * @returns the git environment that activates the hooks for one git process
 *   (`GIT_CONFIG_COUNT`/`KEY`/`VALUE` setting `core.hooksPath`).
 */
export async function installHooks(dir: string, nodePath: string): Promise<Record<string, string>> {
  await mkdir(dir, { recursive: true });
  const program = path.join(dir, 'pre-receive.mjs');
  await writeFile(program, HOOK_PROGRAM);
  const wrapper = path.join(dir, 'pre-receive');
  await writeFile(wrapper, `#!/bin/sh\nexec ${shellQuote(nodePath)} ${shellQuote(program)}\n`);
  await chmod(wrapper, 0o755);
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: dir };
}

/** One ref update as receive-pack announces it (`ZERO_HASH` old = creation, new = deletion). */
export interface PushedRef {
  oldHash: string;
  newHash: string;
  ref: string;
}

/**
 * Checks a quarantine environment forwarded by the hook: every path must lie inside `repo`
 * (so a request cannot point git at other object stores). Returns the variables to pass to git.
 */
export function quarantineEnv(repo: string, env: Record<string, unknown>): Record<string, string> {
  const result: Record<string, string> = {};
  const inside = (p: string) => path.resolve(repo, p).startsWith(repo + path.sep);
  for (const key of QUARANTINE_ENV) {
    const v = env[key];
    if (typeof v !== 'string' || v === '') continue;
    if (!v.split(':').every(inside)) continue;
    result[key] = v;
  }
  return result;
}

/**
 * Whether moving a ref from `oldHash` to `newHash` is a fast-forward (old is an ancestor of new),
 * looking also at the objects still in the push's quarantine.
 *
 * @param repo absolute path of the bare repository.
 * @param env quarantine variables from {@link quarantineEnv}.
 */
export async function isFastForward(repo: string, oldHash: string, newHash: string, env: Record<string, string>): Promise<boolean> {
  if (oldHash === ZERO_HASH || newHash === ZERO_HASH) return true;
  if (!isObjectId(oldHash) || !isObjectId(newHash)) return false;
  const res = await runGit([gitDir(repo), 'merge-base', '--is-ancestor', value(oldHash), value(newHash)], { env, okExitCodes: [0, 1, 128] });
  return res.exitCode === 0;
}
