/**
 * The server side of receive-pack's hooks (docs/architecture.md#a-push): installs the
 * hook program under `<data dir>/hooks`, makes the per-process secret the hooks present, and
 * builds the git environment of one push (hook directory, pack size limit, loopback URL,
 * project, pusher, push id). Every transport that runs receive-pack takes its environment from here.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../../config.js';
import { HOOK_ENV, HOOK_SECRET_HEADER, installHooks, receivePackEnv } from '../../git/hooks.js';

export { HOOK_SECRET_HEADER };

/** Where the server answers the hooks (`<path>/pre-receive`, `<path>/post-receive`), on its HTTP port. */
export const HOOKS_PATH = '/~internal/hooks';

/** The hooks of this process. */
export interface PushHooks {
  /**
   * Git environment for one push: `hooksUrl` is where the hooks post (`<url>/pre-receive`,
   * `<url>/post-receive`), with a fresh push id both hooks send; packs over
   * `config.pushMaxBytes` are refused by git.
   */
  envFor(hooksUrl: string, projectId: number, userId: number): Record<string, string>;
  /** Whether a hook request's secret header is this process's secret (constant time). */
  accepts(secret: unknown): boolean;
}

/**
 * Installs the hooks (idempotent) and returns the process's {@link PushHooks}, with a fresh
 * random secret (32 bytes, hex).
 */
export async function preparePushHooks(config: Config): Promise<PushHooks> {
  const secret = randomBytes(32).toString('hex');
  const hooksDir = path.join(config.dataDir, 'hooks');
  await installHooks(hooksDir, process.execPath);
  const hookEnv = receivePackEnv({ hooksDir, maxInputBytes: config.pushMaxBytes });
  return {
    envFor: (hooksUrl, projectId, userId) => ({
      ...hookEnv,
      [HOOK_ENV.url]: hooksUrl,
      [HOOK_ENV.secret]: secret,
      [HOOK_ENV.projectId]: String(projectId),
      [HOOK_ENV.userId]: String(userId),
      [HOOK_ENV.pushId]: randomUUID(),
    }),
    accepts(given) {
      if (typeof given !== 'string') return false;
      const a = Buffer.from(secret);
      const b = Buffer.from(given);
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}
