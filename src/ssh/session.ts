/**
 * One SSH session channel of an authenticated user (docs/compatibility.md#git-over-ssh): the
 * `GIT_PROTOCOL` environment request, then either an exec request — a git service run through
 * the same authorization, hooks and journal as git over HTTP (src/domain/repositories/git-access.ts),
 * `git-lfs-authenticate` (a short-lived token for Git LFS over HTTP(S)), or anything else,
 * refused — or a shell request, answered
 * with a greeting and exit status 1. Every refusal is one line on the channel's stderr, prefixed
 * `Gitloom: `, and a non-zero exit status.
 */
import type { ServerChannel, Session } from 'ssh2';
import { actorOfUser } from '../domain/auth/index.js';
import { createContext, type Services } from '../domain/context.js';
import { issueLfsToken } from '../domain/lfs/index.js';
import { type GitAccess, gitProjectPath, gitServiceAccess, serveGitSession } from '../domain/repositories/index.js';
import { GitloomError } from '../errors.js';
import { parseSshCommand, type SshCommand } from './commands.js';
import type { SshLog } from './server.js';

/** What a session knows of its connection and of the server. */
export interface SessionScope {
  services: Services;
  gitAccess: GitAccess;
  /** The push hooks' URL on this server's HTTP port. */
  hooksUrl: string;
  /** The authenticated user. */
  userId: number;
  login: string;
  /** Claims one of the user's concurrent git commands; false when they are all taken. */
  claim(): boolean;
  /** Gives a claimed command back. */
  release(): void;
  /** The channels of the connection now open, told when the connection is closed for idling. */
  channels: Set<ServerChannel>;
  log: SshLog;
}

/** Ends a channel with a message on its stderr (one line) and an exit status. */
function finish(channel: ServerChannel, status: number, message?: string): void {
  if (message !== undefined) channel.stderr.write(`${message}\n`);
  channel.exit(status);
  channel.end();
}

/** The greeting of a shell request or of an exec request without a command, as GitHub words it. */
export function greeting(login: string): string {
  return `Hi ${login}! You've successfully authenticated, but Gitloom does not provide shell access.`;
}

/**
 * Runs a git service for the session's user: a fresh actor (a user deleted since the connection
 * authenticated is refused), one of the user's concurrent commands, authorization as over HTTP,
 * then git streamed over the channel until it exits, its exit code the channel's exit status.
 */
async function runGit(
  scope: SessionScope,
  channel: ServerChannel,
  command: Extract<SshCommand, { kind: 'git' }>,
  gitProtocol: string | undefined,
): Promise<void> {
  if (!scope.claim()) {
    finish(channel, 1, `Gitloom: too many git commands of ${scope.login} at once (at most ${scope.services.config.sshMaxSessionsPerUser}); try again shortly`);
    return;
  }
  const aborted = new AbortController();
  channel.once('close', () => aborted.abort());
  try {
    const { services } = scope;
    const ctx = createContext(services, await actorOfUser(services.db, scope.userId, Date.now()));
    const { access } = gitServiceAccess(command.service);
    const repo = await scope.gitAccess.authorize(ctx, gitProjectPath(command.path), access, scope.hooksUrl);
    const started = Date.now();
    const code = await serveGitSession(
      repo,
      command.service,
      { input: channel, output: channel, errors: channel.stderr },
      { gitProtocol, signal: aborted.signal },
    );
    // as HTTP requests are logged: what changes something at info, reads at debug
    const line = { userId: scope.userId, command: command.service, projectId: repo.projectId, exitCode: code, ms: Date.now() - started };
    if (command.service === 'git-receive-pack') scope.log.info(line, 'git over SSH');
    else scope.log.debug(line, 'git over SSH');
    if (!aborted.signal.aborted) finish(channel, code);
  } catch (error) {
    if (!aborted.signal.aborted) refuse(scope, channel, error, { command: command.service, path: command.path });
  } finally {
    scope.release();
  }
}

/** Ends a command that failed: a refusal's own message, or an internal error (logged with `what`). */
function refuse(scope: SessionScope, channel: ServerChannel, error: unknown, what: Record<string, unknown>): void {
  if (error instanceof GitloomError && error.status < 500) return finish(channel, 1, `Gitloom: ${error.message}`);
  if (error instanceof GitloomError && error.status === 503) return finish(channel, 1, `Gitloom: ${error.message}; try again shortly`);
  scope.log.error({ err: error, userId: scope.userId, ...what }, 'git over SSH failed');
  finish(channel, 1, 'Gitloom: internal server error');
}

/**
 * `git-lfs-authenticate <path> <download|upload>` (Git LFS's SSH authentication): the LFS
 * endpoint of the project and a short-lived token for the operation (src/domain/lfs/tokens.ts),
 * as JSON on stdout, when the key's owner may read (download) or write (upload) its code.
 */
async function lfsAuthenticate(scope: SessionScope, channel: ServerChannel, args: string[]): Promise<void> {
  const [path, operation] = args;
  if (args.length !== 2 || (operation !== 'download' && operation !== 'upload')) {
    return finish(channel, 1, 'Gitloom: usage: git-lfs-authenticate <path> download|upload');
  }
  try {
    const { services } = scope;
    const ctx = createContext(services, await actorOfUser(services.db, scope.userId, Date.now()));
    const repo = await scope.gitAccess.authorize(ctx, gitProjectPath(path), operation === 'upload' ? 'write' : 'read', scope.hooksUrl);
    const answer = await issueLfsToken(ctx, { userId: scope.userId, projectId: repo.projectId, operation });
    channel.write(`${JSON.stringify(answer)}\n`);
    finish(channel, 0);
  } catch (error) {
    refuse(scope, channel, error, { command: 'git-lfs-authenticate', path });
  }
}

/** Answers an exec request. */
function exec(scope: SessionScope, channel: ServerChannel, text: string, gitProtocol: string | undefined): void {
  const command = parseSshCommand(text);
  if (text.trim() === '') return finish(channel, 1, greeting(scope.login));
  if (command.kind === 'git') {
    void runGit(scope, channel, command, gitProtocol);
    return;
  }
  if (command.kind === 'lfs' && command.name === 'git-lfs-authenticate') {
    void lfsAuthenticate(scope, channel, command.args);
    return;
  }
  // git-lfs falls back to git-lfs-authenticate and HTTP(S) when this fails
  if (command.kind === 'lfs')
    return finish(channel, 1, `Gitloom: ${command.name} is not supported: Git LFS objects move over HTTP(S), with the token git-lfs-authenticate gives`);
  finish(channel, 1, `Gitloom: unknown command '${command.name}': only git-upload-pack and git-receive-pack are served`);
}

/**
 * Serves one session channel: remembers the client's `GIT_PROTOCOL` (other variables are
 * refused), accepts a pseudo-terminal (for the greeting of `ssh host`), then answers the exec or
 * shell request. Subsystems (sftp), X11 and agent forwarding are refused by the SSH library.
 */
export function serveSession(scope: SessionScope, session: Session): void {
  let gitProtocol: string | undefined;
  session.on('env', (accept, reject, info) => {
    if (info.key !== 'GIT_PROTOCOL') return reject?.();
    gitProtocol = info.val;
    accept?.();
  });
  session.on('pty', (accept) => accept?.());
  const opened = (channel: ServerChannel) => {
    scope.channels.add(channel);
    channel.once('close', () => scope.channels.delete(channel));
    return channel;
  };
  session.on('shell', (accept) => finish(opened(accept()), 1, greeting(scope.login)));
  session.on('exec', (accept, _reject, info) => exec(scope, opened(accept()), info.command, gitProtocol));
}
