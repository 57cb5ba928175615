/**
 * How a mirror reaches its remote, safely (docs/security.md#outbound-connections): the URL is
 * checked by the outbound rules when saved and again, on the addresses then resolved, right
 * before each git command, which is pinned to those addresses; the password is stored encrypted
 * and handed to git only inside its environment; whatever is shown of a failure has the
 * credentials taken out.
 */
import net from 'node:net';
import { GitError } from '../../git/command.js';
import type { RemoteConnection } from '../../git/remotes.js';
import type { RepositoryMirrorRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import { OutboundTargetRefused, resolveOutboundHost } from '../outbound.js';
import { decryptSecret, encryptSecret, secretKey } from '../projects/index.js';

/** Purpose of a mirror password's encryption: it decrypts as nothing else, nothing else as it. */
const MIRROR_PASSWORD = Buffer.from('gitloom mirror password');

/** The resolver's answers that mean "this name does not resolve now" (not a fault of the server). */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ETIMEOUT', 'ECONNREFUSED']);

/** How long saving a mirror waits for the URL's host to resolve, ms. */
const SAVE_LOOKUP_MS = 5000;

function unresolved(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNRESOLVED.has(code) ? code : null;
}

/** Encrypts a mirror password for storage (the job secrets' key, a purpose of its own). */
export function sealPassword(ctx: Pick<Context, 'config'>, password: string): string {
  return encryptSecret(secretKey(ctx.config), password, MIRROR_PASSWORD);
}

/** The host of a URL as a resolver takes it (an IPv6 literal without brackets). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Checks a mirror URL as it is saved and returns it normalized (WHATWG URL serialization, so git
 * reads the very host that was checked): http or https, no credentials, no fragment, at most 1000
 * characters, and a host the outbound rules allow — an IP literal must be public, a name must not
 * resolve to any non-public address (unless `GITLOOM_WEBHOOK_ALLOW_PRIVATE=true`). A name that
 * does not resolve now (or not within 5 s) is accepted: every sync checks again.
 *
 * @throws BadRequest (`GITLOOM_ERR_MIRROR_URL`) naming what is wrong.
 */
export async function checkMirrorUrl(ctx: Pick<Context, 'config'>, text: string): Promise<string> {
  const bad = (detail: string) => new BadRequest(detail, { code: 'GITLOOM_ERR_MIRROR_URL' });
  const trimmed = text.trim();
  if (trimmed.length > 1000) throw bad('url must be at most 1000 characters');
  if (/[\s\0-\x1f\x7f]/.test(trimmed)) throw bad('url must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw bad('url must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('url must be an http or https URL');
  if (url.username !== '' || url.password !== '') throw bad('url must not hold credentials: give them as userName and password, which are stored encrypted');
  if (url.hash !== '') throw bad('url must not have a fragment (#…)');
  const lookup = resolveOutboundHost(hostOf(url), ctx.config.webhookAllowPrivate);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), SAVE_LOOKUP_MS)));
  try {
    await Promise.race([lookup, timeout]);
  } catch (error) {
    if (error instanceof OutboundTargetRefused) {
      throw bad(`url: ${error.message}, which the outbound rules refuse (an administrator may allow private addresses: GITLOOM_WEBHOOK_ALLOW_PRIVATE=true)`);
    }
    if (unresolved(error) === null) throw error;
  } finally {
    // a lookup that loses the race settles later unobserved: the race holds its rejection
    clearTimeout(timer);
  }
  return url.href;
}

/** A mirror's connection for git, and the secrets to take out of anything shown of its failures. */
export interface MirrorConnection {
  connection: RemoteConnection;
  secrets: string[];
}

/**
 * The connection of one sync, made right before it: the password decrypted into an
 * `Authorization: Basic` header, the URL's host resolved now and checked by the outbound rules,
 * and git pinned to the addresses checked (a host name that resolves to a public address now
 * and to a private one a moment later — DNS rebinding — still reaches the public one).
 *
 * @throws OutboundTargetRefused when an address is not public and private targets are not allowed.
 * @throws Error (`ENOTFOUND`, …) when the host does not resolve; Error when the password does
 *   not decrypt (the secret key changed).
 */
export async function mirrorConnection(ctx: Pick<Context, 'config'>, row: RepositoryMirrorRow): Promise<MirrorConnection> {
  const password = row.password === null ? null : decryptSecret(secretKey(ctx.config), row.password, MIRROR_PASSWORD);
  const url = new URL(row.url);
  const host = hostOf(url);
  const addresses = await resolveOutboundHost(host, ctx.config.webhookAllowPrivate);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const basic = password !== null && row.userName !== null ? Buffer.from(`${row.userName}:${password}`).toString('base64') : null;
  return {
    connection: { url: row.url, authorization: basic === null ? null : `Basic ${basic}`, pinned: net.isIP(host) ? null : { host, port, addresses } },
    secrets: password === null ? [] : [password, basic!, encodeURIComponent(password)].filter((s) => s.length > 0),
  };
}

/**
 * What is shown and logged of a failed sync, at most 2000 characters: git's own message (its
 * stderr; never its arguments, which name server paths), the outbound refusal, the unresolved
 * name, or the error's message — with every secret of the mirror replaced by `[REDACTED]`.
 */
export function failureText(error: unknown, secrets: readonly string[]): string {
  let text: string;
  if (error instanceof GitError) {
    text = error.stderr.trim() || (error.exitCode === null ? 'git was stopped: the transfer took too long' : `git exited with code ${error.exitCode}`);
  } else if (error instanceof OutboundTargetRefused) {
    text = `${error.message}: refused by the outbound rules (an administrator may allow private addresses: GITLOOM_WEBHOOK_ALLOW_PRIVATE=true)`;
  } else if (unresolved(error) !== null) {
    text = `The remote's host does not resolve (${unresolved(error)})`;
  } else {
    text = error instanceof Error ? error.message : String(error);
  }
  for (const secret of secrets) text = text.split(secret).join('[REDACTED]');
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
