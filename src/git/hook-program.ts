/**
 * The program git's receive-pack runs as its `pre-receive` and `post-receive` hooks (installed by
 * src/git/hooks.ts; `node hook-program.js <hook name>`). It reads the `old new ref` lines git
 * gives on stdin and posts them, with the project and the pusher from its environment, to the
 * server that started the push (loopback URL and per-process secret in the environment):
 *
 * - `pre-receive`: the server checks the push and writes its ref changes to the ref-change journal
 *   as intents; it answers `{ errors: string[] }` and any error rejects the push (exit 1) and is
 *   printed to the pusher. A server that cannot answer — unreachable, or its database unavailable
 *   (503) — rejects the push too, before any ref moves.
 * - `post-receive`: the server confirms the journal rows and answers once they are stored, so the
 *   push returns only after its journal rows exist. A failure is printed (the rows are then
 *   confirmed by the server's recovery once it can).
 *
 * Self-contained (Node built-ins only): it runs as its own process, from src/ under tsx or from
 * the compiled dist/.
 */
import { readFileSync } from 'node:fs';

/** Environment variables the hook reads (set by the server for each push). */
export const HOOK_ENV = {
  url: 'GITLOOM_HOOK_URL',
  secret: 'GITLOOM_HOOK_SECRET',
  projectId: 'GITLOOM_HOOK_PROJECT_ID',
  userId: 'GITLOOM_HOOK_USER_ID',
  /** One push (one receive-pack run): its pre-receive and post-receive hooks send the same id. */
  pushId: 'GITLOOM_HOOK_PUSH_ID',
} as const;

/** The header carrying the per-process secret on the hook's request. */
export const HOOK_SECRET_HEADER = 'x-gitloom-hook-secret';

/** Quarantine variables receive-pack gives its hooks; forwarded so the server sees the new objects. */
export const QUARANTINE_ENV = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'] as const;

/** The hooks this program implements; the server serves `<url>/<hook name>`. */
export const HOOK_NAMES = ['pre-receive', 'post-receive'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** One `old new ref` line of a hook's input. */
export interface HookUpdate {
  oldHash: string;
  newHash: string;
  ref: string;
}

/** Parses the hook's stdin: one `<old> <new> <ref>` line per ref. */
export function parseHookInput(input: string): HookUpdate[] {
  return input
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [oldHash, newHash, ref] = line.split(' ');
      return { oldHash, newHash, ref };
    });
}

async function post(hook: HookName, body: unknown): Promise<unknown> {
  const env = process.env;
  const response = await fetch(`${env[HOOK_ENV.url]}/${hook}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [HOOK_SECRET_HEADER]: env[HOOK_ENV.secret] ?? '' },
    body: JSON.stringify(body),
  });
  if (response.status === 503) throw new Error('the server cannot record pushes right now, its database is unavailable; try again shortly');
  if (!response.ok) throw new Error(`server answered ${response.status}`);
  return response.json();
}

async function main(hook: HookName): Promise<number> {
  const env = process.env;
  const updates = parseHookInput(readFileSync(0, 'utf8'));
  const common = { projectId: Number(env[HOOK_ENV.projectId]), userId: Number(env[HOOK_ENV.userId]), pushId: env[HOOK_ENV.pushId] ?? '', updates };
  if (hook === 'pre-receive') {
    const quarantine: Record<string, string> = {};
    for (const key of QUARANTINE_ENV) if (env[key]) quarantine[key] = env[key];
    try {
      const { errors } = (await post(hook, { ...common, quarantine })) as { errors: string[] };
      if (errors.length === 0) return 0;
      process.stderr.write(`\n${errors.map((e) => `*** PUSH REJECTED: ${e} ***`).join('\n')}\n\n`);
    } catch (error) {
      process.stderr.write(`*** PUSH REJECTED: ${(error as Error).message} ***\n`);
    }
    return 1;
  }
  try {
    await post(hook, common);
    return 0;
  } catch (error) {
    process.stderr.write(`*** Push received, but the server could not record it (${(error as Error).message}) ***\n`);
    return 1;
  }
}

const hook = process.argv[2];
if ((HOOK_NAMES as readonly string[]).includes(hook ?? '') && process.env[HOOK_ENV.url]) {
  process.exitCode = await main(hook as HookName);
}
