/**
 * Git over SSH, served by the Gitloom process itself (docs/compatibility.md#git-over-ssh,
 * docs/security.md#git-over-ssh), with the `ssh2` library: the host keys of the data dir,
 * public-key authentication against the users' SSH keys, and session channels served by
 * src/ssh/session.ts. Its own TCP listener hands each accepted socket to ssh2, so that the
 * limits hold before any SSH byte is read:
 *
 * - at most `sshMaxUnauthenticated` connections may be authenticating at once; more are dropped
 *   on arrival, and a connection has {@link LOGIN_GRACE_MS} to authenticate;
 * - {@link MAX_AUTH_FAILURES} failed authentication attempts end a connection (OpenSSH's
 *   `MaxAuthTries`);
 * - a user runs at most `sshMaxSessionsPerUser` git commands at once, over all connections;
 * - a connection that receives nothing from its client for `sshIdleTimeoutMs` is closed, its
 *   channels told why (ssh2's keepalive probes, which a client answers, come later than that).
 */
import net from 'node:net';
import ssh2, { type AuthContext, type Connection, type ServerChannel } from 'ssh2';
import type { Services } from '../domain/context.js';
import type { GitAccess } from '../domain/repositories/index.js';
import { hostKeyInfo, type HostKeyInfo, sshHostKeys } from '../domain/ssh/index.js';
import { sshKeyOwner } from '../domain/users/index.js';
import { serveSession, type SessionScope } from './session.js';

/** Failed authentication attempts after which a connection is ended. */
export const MAX_AUTH_FAILURES = 6;
/** Time a connection has to authenticate, in ms. */
export const LOGIN_GRACE_MS = 60_000;
/** Time the idle notice has to reach the client before its connection ends, in ms. */
const IDLE_NOTICE_MS = 250;
/** Time running git commands have to finish when the server stops, in ms. */
const CLOSE_GRACE_MS = 5_000;

/** The running SSH server. */
export interface SshServer {
  /** The port it listens on. */
  port: number;
  /** Its host keys, Ed25519 first. */
  hostKeys: HostKeyInfo[];
  /** Stops accepting connections, lets running git commands finish (5 s at most), closes the rest. */
  close(): Promise<void>;
}

/** Where the server writes what happened. */
export interface SshLog {
  debug(object: object, message: string): void;
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** Options of {@link startSshServer}. */
export interface SshServerOptions {
  services: Services;
  gitAccess: GitAccess;
  /** This server's HTTP URL as reached over loopback (`http://127.0.0.1:6610`): the push hooks post there. */
  httpUrl: string;
  hooksPath: string;
  log: SshLog;
}

/** A duration for people: `1.5 s`, `10 min`. */
function duration(ms: number): string {
  return ms < 60_000 ? `${ms / 1000} s` : `${Number((ms / 60_000).toFixed(1))} min`;
}

/** Git commands running per user, over all connections. */
class SessionCounts {
  readonly #running = new Map<number, number>();
  constructor(readonly max: number) {}
  claim(userId: number): boolean {
    const running = this.#running.get(userId) ?? 0;
    if (running >= this.max) return false;
    this.#running.set(userId, running + 1);
    return true;
  }
  release(userId: number): void {
    const running = (this.#running.get(userId) ?? 1) - 1;
    if (running <= 0) this.#running.delete(userId);
    else this.#running.set(userId, running);
  }
  get total(): number {
    let total = 0;
    for (const running of this.#running.values()) total += running;
    return total;
  }
}

/**
 * Checks one authentication request: only `publickey`, with a key some user registered (its
 * blob compared), and a valid signature (ssh2 verifies it with the stored key). A key query
 * without signature is answered yes for a registered key, as OpenSSH does. Resolves with the
 * key's owner when the request authenticates, else null.
 */
async function authenticate(services: Services, ctx: AuthContext): Promise<{ userId: number; login: string } | null> {
  if (ctx.method !== 'publickey') return null;
  const owner = await sshKeyOwner(services.db, ctx.key.data);
  if (owner === null || owner.userId <= 0) return null;
  if (ctx.signature !== undefined && ctx.blob !== undefined) {
    const parsed = ssh2.utils.parseKey(owner.content);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (key instanceof Error || key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return null;
  }
  return owner;
}

/** A connection the listener accepted, until ssh2 reads its identification. */
interface Accepted {
  socket: net.Socket;
  /** Tells the listener the connection authenticated (it no longer counts against the bound). */
  authenticated(): void;
}

/**
 * Starts the SSH server on `config.sshHost`:`config.sshPort` (0: any free port) with the host
 * keys of the data dir (made on first start).
 *
 * @throws Error when the port cannot be bound (in use, not allowed) or a host key file is unreadable.
 */
export async function startSshServer(options: SshServerOptions): Promise<SshServer> {
  const { services, log } = options;
  const { config } = services;
  const hostKeys = await sshHostKeys(config);
  const sessions = new SessionCounts(config.sshMaxSessionsPerUser);
  const idle = config.sshIdleTimeoutMs;
  const server = new ssh2.Server({
    hostKeys: hostKeys.map((key) => key.privateKey),
    ident: 'Gitloom',
    // ssh2 probes a silent client (and counts its answer as traffic): with an idle timeout the
    // connection is closed before the first probe; without one, dead peers go after 4 probes
    ...(idle > 0 && { keepaliveInterval: Math.min(2 * idle, 2 ** 31 - 1) }),
  });
  const sockets = new Set<net.Socket>();
  let authenticating = 0;
  const accepted = new Map<string, Accepted>();
  const addressOf = (ip: string | undefined, port: number | undefined) => `${ip}|${port}`;

  const listener = net.createServer((socket) => {
    if (authenticating >= config.sshMaxUnauthenticated) {
      log.warn(
        { ip: socket.remoteAddress },
        `SSH connection dropped: ${authenticating} connections are authenticating already (GITLOOM_SSH_MAX_UNAUTHENTICATED)`,
      );
      socket.destroy();
      return;
    }
    authenticating++;
    sockets.add(socket);
    const grace = setTimeout(() => socket.destroy(), LOGIN_GRACE_MS);
    let counted = true;
    const authenticated = () => {
      clearTimeout(grace);
      if (counted) authenticating--;
      counted = false;
    };
    const key = addressOf(socket.remoteAddress, socket.remotePort);
    accepted.set(key, { socket, authenticated });
    socket.once('close', () => {
      authenticated();
      sockets.delete(socket);
      accepted.delete(key);
    });
    socket.on('error', () => socket.destroy());
    // the handshake is a dozen small packets each waiting for the other side's answer: Nagle's
    // algorithm would hold every one for the peer's delayed ACK
    socket.setNoDelay(true);
    server.injectSocket(socket);
  });

  server.on('connection', (client: Connection, info) => {
    const key = addressOf(info.ip, info.port);
    const connection = accepted.get(key);
    accepted.delete(key);
    if (connection) serveConnection(options, client, connection, sessions);
  });

  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(config.sshPort ?? 0, config.sshHost, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  listener.on('error', (error) => log.error({ err: error }, 'SSH listener failed'));
  return {
    port: (listener.address() as net.AddressInfo).port,
    hostKeys: hostKeys.map(hostKeyInfo),
    async close() {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      const deadline = Date.now() + CLOSE_GRACE_MS;
      while (sessions.total > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/**
 * Closes a connection whose client sent nothing for `idleMs` (0: never): its open channels are
 * told why on stderr, and the connection ends a moment later, once the line had time to arrive.
 */
function closeWhenIdle(options: SshServerOptions, client: Connection, socket: net.Socket, channels: Set<ServerChannel>, who: () => object): void {
  const idleMs = options.services.config.sshIdleTimeoutMs;
  if (idleMs === 0) return;
  const timer = setTimeout(() => {
    for (const channel of channels) channel.stderr.write(`Gitloom: closing the connection after ${duration(idleMs)} without traffic\n`);
    options.log.warn(who(), 'SSH connection closed: idle');
    setTimeout(() => client.end(), IDLE_NOTICE_MS);
  }, idleMs);
  socket.on('data', () => timer.refresh());
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Serves one client: counts its failed authentication attempts, tells the listener once it has
 * authenticated, then serves its session channels as the key's owner; closes it when idle.
 */
function serveConnection(options: SshServerOptions, client: Connection, connection: Accepted, sessions: SessionCounts): void {
  const { services, log } = options;
  const ip = connection.socket.remoteAddress;
  let failures = 0;
  let user: { userId: number; login: string } | null = null;
  const channels = new Set<ServerChannel>();
  closeWhenIdle(options, client, connection.socket, channels, () => ({ ip, userId: user?.userId }));
  client.on('authentication', (ctx) => {
    authenticate(services, ctx).then(
      (owner) => {
        if (owner !== null) {
          user = owner;
          return ctx.accept();
        }
        // the client's first `none` request only asks which methods there are
        if (ctx.method !== 'none') failures++;
        if (failures < MAX_AUTH_FAILURES) return ctx.reject(['publickey']);
        // the last refusal is the disconnection, as OpenSSH's MaxAuthTries does
        log.warn({ ip }, `SSH connection ended after ${MAX_AUTH_FAILURES} failed authentication attempts`);
        client.end();
      },
      (error: unknown) => {
        log.error({ err: error, ip }, 'SSH authentication failed');
        ctx.reject(['publickey']);
      },
    );
  });
  client.on('ready', () => {
    connection.authenticated();
    const { userId, login } = user!;
    const scope: SessionScope = {
      services,
      gitAccess: options.gitAccess,
      hooksUrl: `${options.httpUrl}${options.hooksPath}`,
      userId,
      login,
      claim: () => sessions.claim(userId),
      release: () => sessions.release(userId),
      channels,
      log,
    };
    client.on('session', (accept) => serveSession(scope, accept()));
  });
  // a peer's protocol or network failure ends its connection; ssh2 closes the socket itself
  client.on('error', (error: Error) => log.debug({ err: error, ip }, 'SSH connection failed'));
}
