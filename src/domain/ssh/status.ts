import { sshRootUrlOf } from '../../config.js';
import { requireAdmin } from '../actor.js';
import type { Context } from '../context.js';
import { hostKeyInfo, sshHostKeys, type HostKeyInfo } from './host-keys.js';

/** What Administration › SSH shows (docs/compatibility.md#git-over-ssh). */
export interface SshStatus {
  /** The port the SSH server listens on, or null when SSH is off. */
  port: number | null;
  /** The interface it binds. */
  host: string;
  /** The root of SSH clone URLs (`ssh://host:port`), or null when there is none. */
  rootUrl: string | null;
  /** The host keys clients see (none while SSH is off). */
  hostKeys: HostKeyInfo[];
  /** The limits: git commands per user at once, idle timeout (ms), unauthenticated connections. */
  limits: { sessionsPerUser: number; idleTimeoutMs: number; unauthenticated: number };
}

/**
 * The SSH server's configuration as it runs, for administrators (401/403 otherwise): port, root
 * of clone URLs, host key fingerprints and limits.
 */
export async function sshStatus(ctx: Context): Promise<SshStatus> {
  requireAdmin(ctx.actor);
  const { config } = ctx;
  const hostKeys = config.sshPort === null ? [] : (await sshHostKeys(config)).map(hostKeyInfo);
  return {
    port: config.sshPort,
    host: config.sshHost,
    rootUrl: sshRootUrlOf(config),
    hostKeys,
    limits: { sessionsPerUser: config.sshMaxSessionsPerUser, idleTimeoutMs: config.sshIdleTimeoutMs, unauthenticated: config.sshMaxUnauthenticated },
  };
}
