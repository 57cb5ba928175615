/**
 * The one push and fetch path of every git transport (docs/architecture.md#a-push): git over HTTP
 * (src/http/routes/git-http-wiring.ts) and over SSH (src/ssh/) authorize through
 * {@link GitAccess.authorize} — read code to fetch, write code to push — and run receive-pack
 * with the same hooks, whose requests {@link GitAccess.preReceive} and
 * {@link GitAccess.postReceive} answer: branch and tag protection and the server's ref
 * namespaces, Git LFS objects the pushed pointers name (docs/compatibility.md#git-lfs), then the ref-change journal (intents before any ref moves, confirmed before the
 * push returns). A push therefore meets the same rules, messages and reactions whichever
 * transport carried it.
 */
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.js';
import type { PushedRef } from '../../git/hooks.js';
import type { Db } from '../../db/database.js';
import { ZERO_HASH } from '../../git/names.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { journalPush, journalPushIntents, type PushIntent } from '../journal/index.js';
import { checkLfsPush } from '../lfs/index.js';
import { authorizeRepository, checkPush } from '../projects/index.js';
import { userNamesByIds } from '../users/index.js';
import type { ServedRepository } from './git-protocol.js';
import { preparePushHooks } from './push-hooks.js';

/** What the post-receive hook reports: the project, the pusher, the push and its ref updates. */
export interface PushReport {
  projectId: number;
  userId: number;
  /** The id both hooks of one receive-pack send. */
  pushId: string;
  updates: PushedRef[];
}

/** What the pre-receive hook reports: the push, and the quarantine holding its objects. */
export interface PreReceiveReport extends PushReport {
  quarantine: Record<string, string>;
}

/** An authorized repository: its project and what git needs to serve it. */
export interface AuthorizedRepository extends ServedRepository {
  projectId: number;
}

/** The process's git access: authorization and the hooks' side of every push. */
export interface GitAccess {
  /**
   * Authorizes the context's actor to fetch (`read`) or push (`write`) the project at
   * `projectPath`; for a push, the repository comes with the environment of its hooks, which
   * post to `hooksUrl` (this server's `/~internal/hooks`, over loopback).
   *
   * @throws NotFound (unknown or invisible project), Forbidden (`No permission to read code`,
   *   `No permission to push code`), Unauthorized (anonymous callers lacking the privilege).
   */
  authorize(ctx: Context, projectPath: string, access: 'read' | 'write', hooksUrl: string): Promise<AuthorizedRepository>;
  /** Whether a hook request's secret is this process's (constant time). */
  accepts(secret: unknown): boolean;
  /**
   * The pre-receive hook's question: the reasons the push is refused (none: allowed), after
   * which an allowed push's ref changes are written to the journal as intents.
   */
  preReceive(ctx: Context, report: PreReceiveReport): Promise<{ errors: string[] }>;
  /** The post-receive hook's report: confirms the push's journal rows before the push returns. */
  postReceive(ctx: Context, report: PushReport): Promise<void>;
}

/**
 * The audit rows of the branches a push deleted (`branch.delete`, docs/audit-log.md#actions),
 * in the transaction recording the push: the pusher is the actor; the address is unknown to the
 * hook (null).
 */
async function auditPushedDeletions(ctx: Context, tx: Db, report: { projectId: number; userId: number; updates: readonly PushedRef[] }): Promise<void> {
  const deleted = report.updates.filter((u) => u.newHash === ZERO_HASH && u.ref.startsWith('refs/heads/'));
  if (deleted.length === 0) return;
  const name = (await userNamesByIds(tx, [report.userId])).get(report.userId) ?? String(report.userId);
  for (const update of deleted) {
    await recordAudit(ctx, tx, {
      action: 'branch.delete',
      targetType: 'branch',
      targetName: update.ref.slice('refs/heads/'.length),
      projectId: report.projectId,
      actor: { id: report.userId, name },
      before: { commit: update.oldHash, via: 'push' },
    });
  }
}

/**
 * Installs the push hooks (`<data dir>/hooks`) and returns the process's {@link GitAccess},
 * with a fresh hook secret: make one per process and give it to every transport.
 */
export async function prepareGitAccess(config: Config): Promise<GitAccess> {
  const hooks = await preparePushHooks(config);
  // the intents each push's pre-receive wrote, by push id, for its post-receive (a push whose
  // post-receive never comes leaves them to recovery)
  const intentsOfPush = new LRUCache<string, PushIntent[]>({ max: 10_000, ttl: 60 * 60_000 });
  return {
    async authorize(ctx, projectPath, access, hooksUrl) {
      const repo = await authorizeRepository(ctx, projectPath, access);
      if (access === 'read') return repo;
      return { ...repo, env: hooks.envFor(hooksUrl, repo.projectId, ctx.actor.userId) };
    },
    accepts: (secret) => hooks.accepts(secret),
    async preReceive(ctx, report) {
      const errors = await checkPush(ctx, report.projectId, report.userId, report.updates, report.quarantine);
      if (errors.length === 0) errors.push(...(await checkLfsPush(ctx, report.projectId, report.updates, report.quarantine)));
      if (errors.length === 0) intentsOfPush.set(report.pushId, await journalPushIntents(ctx, report.projectId, report.userId, report.updates));
      return { errors };
    },
    async postReceive(ctx, report) {
      const intents = intentsOfPush.get(report.pushId) ?? [];
      intentsOfPush.delete(report.pushId);
      await journalPush(ctx, report.projectId, report.userId, report.updates, intents, (tx) => auditPushedDeletions(ctx, tx, report));
    },
  };
}
