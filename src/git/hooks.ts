/**
 * Server-side git hooks (docs/architecture.md#a-push): a pre-receive hook that asks
 * the running server, over loopback with a per-process secret, whether the pushed ref updates
 * are allowed, and a post-receive hook that reports the exact ref changes and the pusher for the
 * ref-change journal (the program: src/git/hook-program.ts). The hooks live in one directory under
 * the data dir and reach receive-pack through `core.hooksPath` given in the environment, so no
 * repository carries its own copy; the same environment limits the size of a pushed pack.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOOK_NAMES, QUARANTINE_ENV } from './hook-program.js';
import { isAncestor } from './merge.js';
import { isObjectId, ZERO_HASH } from './names.js';

export { HOOK_ENV, HOOK_NAMES, HOOK_SECRET_HEADER, QUARANTINE_ENV, type HookName } from './hook-program.js';

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The script git's hooks run with Node: the compiled `hook-program.js` next to this module or, when
 * the server runs from its TypeScript sources, `hook-program.ts` with its types stripped by
 * esbuild into `<dir>/hook-program.mjs` (Node built-ins only, so no bundling). Run through tsx's
 * loader instead, each hook spent about a second of CPU compiling before reading its input: two
 * per push.
 *
 * @param dir the hook directory the stripped script is written to (atomically: several server
 *   processes may share it).
 */
async function hookProgram(dir: string): Promise<string> {
  const self = fileURLToPath(import.meta.url);
  const extension = path.extname(self);
  const program = path.join(path.dirname(self), `hook-program${extension}`);
  if (extension !== '.ts') return program;
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const { code } = await esbuild.transform(await readFile(program, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20' });
  const stripped = path.join(dir, 'hook-program.mjs');
  const temporary = `${stripped}.${process.pid}.tmp`;
  await writeFile(temporary, code);
  await rename(temporary, stripped);
  return stripped;
}

/**
 * Writes the hook directory: `pre-receive` and `post-receive`, shell wrappers running the hook
 * program (src/git/hook-program.ts) with `nodePath`. Idempotent; call at startup.
 *
 * @param dir absolute directory for the hooks (e.g. `<data dir>/hooks`).
 * @param nodePath the Node binary the hook runs with (`process.execPath`).
 */
export async function installHooks(dir: string, nodePath: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const command = [nodePath, await hookProgram(dir)].map(shellQuote).join(' ');
  for (const hook of HOOK_NAMES) {
    const wrapper = path.join(dir, hook);
    await writeFile(wrapper, `#!/bin/sh\nexec ${command} ${hook}\n`);
    await chmod(wrapper, 0o755);
  }
}

/** What receive-pack is told for every push (see {@link receivePackEnv}). */
export interface ReceivePackSettings {
  /** The hook directory written by {@link installHooks}. */
  hooksDir: string;
  /** Largest pack accepted, in bytes (`receive.maxInputSize`). */
  maxInputBytes: number;
}

/**
 * The git environment of one receive-pack (any transport): `core.hooksPath` (the server's
 * hooks decide and record the push) and `receive.maxInputSize`, given as configuration through
 * `GIT_CONFIG_COUNT`/`KEY`/`VALUE`, which outranks the repository's own config and reaches the
 * `index-pack`/`unpack-objects` receive-pack runs. A pack over the limit makes git fail the
 * push with its own message (`fatal: pack exceeds maximum allowed size`, `unpacker error`): no
 * ref moves and receive-pack removes its quarantine.
 *
 * @example receivePackEnv({ hooksDir: '/data/hooks', maxInputBytes: 2 ** 31 })
 */
export function receivePackEnv(settings: ReceivePackSettings): Record<string, string> {
  const entries: [string, string][] = [
    ['core.hooksPath', settings.hooksDir],
    ['receive.maxInputSize', String(settings.maxInputBytes)],
  ];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, val], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = val;
  });
  return env;
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
  return isAncestor(repo, oldHash, newHash, { env, missing: false });
}
