import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/schema.js';
import type { EventBus } from './events.js';

/** The anonymous caller's user id (docs/compatibility.md#platform-authentication: principal 0). */
export const ANONYMOUS_ID = 0;
/** Built-in users and roles (docs/compatibility.md#platform-first-boot, docs/compatibility.md#gitloom-differs-permissions-and-first-boot). */
export const ROOT_ID = 1;
export const SYSTEM_ID = -1;
export const UNKNOWN_ID = -2;
export const OWNER_ROLE_ID = 1;

/** Who is calling: resolved once per request by the authentication plugin. */
export interface Actor {
  /** User id, or ANONYMOUS_ID. */
  userId: number;
  /** The user's login name as authentication read it ('' for anonymous). */
  name: string;
  /** The user's full name as authentication read it. */
  fullName: string | null;
  /** SystemAdministration: root, system, or a member of an administrator group. */
  isAdmin: boolean;
  /** Groups the user belongs to (empty for anonymous). */
  groupIds: number[];
  /** Members of a group with `createRootProjects` (or administrators). */
  canCreateRootProjects: boolean;
  /**
   * Two-factor authentication applies to the user (the security setting's or one of their
   * groups' `enforce2FA`) and they have no second factor yet: the pages send them to enrolment
   * (docs/security.md#two-factor-authentication). Absent: false.
   */
  mustEnrolSecondFactor?: boolean;
  /** The access token the caller presented; absent for sessions, SSH keys, anonymous and background work. */
  token?: ActorToken;
}

/**
 * An access token and what it limits its owner to (docs/compatibility.md#gitloom-differs-sessions-and-tokens).
 * A limited token never carries its owner's administrator rights.
 */
export interface ActorToken {
  /** The token's row id. */
  id: number;
  /** The token reads and fetches only: it changes nothing. */
  readOnly: boolean;
  /** The projects the token reaches (outside them it sees nothing), or null for every project of its owner. */
  projectIds: readonly number[] | null;
}

/** Where a request comes from, as the server sees it (audit rows and sessions record it). */
export interface Client {
  /** The client's IP address (behind a trusted proxy, the address it forwarded). */
  address: string;
  /** The `User-Agent` header, at most 512 characters; null when absent. */
  userAgent: string | null;
}

/** Process-wide dependencies, created once by the server and shared by every request. */
export interface Services {
  db: Kysely<Database>;
  config: Config;
  events: EventBus;
}

/** Everything a domain function needs; never an HTTP request. */
export interface Context {
  db: Kysely<Database>;
  config: Config;
  actor: Actor;
  events: EventBus;
  /** Current time in epoch milliseconds (a function so tests and batches agree on "now"). */
  now(): number;
  /** Absolute path of a project's bare repository. */
  repoPath(projectId: number): string;
  /**
   * What one read-only request (GET, HEAD) has already read, by key (see {@link memoized}); absent
   * for writes and background work, whose reads must see their own changes and others'.
   */
  readonly memo?: Map<string, Promise<unknown>>;
  /** The client of the request this context serves; absent for background work. */
  readonly client?: Client;
}

/** The anonymous actor. */
export const anonymous: Actor = { userId: ANONYMOUS_ID, name: '', fullName: null, isAdmin: false, groupIds: [], canCreateRootProjects: false };

/** Returns a copy of the context acting as another actor (background work acts as the system user). */
export function withActor(ctx: Context, actor: Actor): Context {
  return { ...ctx, actor, memo: ctx.memo && new Map() };
}

/** The system actor used by background work (docs/compatibility.md#platform-first-boot: id -1, administrator). */
export const systemActor: Actor = { userId: SYSTEM_ID, name: 'gitloom', fullName: 'Gitloom', isAdmin: true, groupIds: [], canCreateRootProjects: true };

/** Absolute path of a project's bare repository: `<data dir>/repos/<projectId>.git`. */
export function repositoryPath(config: Config, projectId: number): string {
  return path.join(config.dataDir, 'repos', `${projectId}.git`);
}

const now = () => Date.now();
/** The `repoPath` of each configuration, made once: a context is made per request. */
const repoPaths = new WeakMap<Config, (projectId: number) => string>();

/**
 * A domain Context for one actor (a request, or background work as the system user); with
 * `readOnly` (a GET or HEAD request) it carries a memo, so that a view asking the same question
 * several times (the caller's permissions on a project, the project's row) reads it once.
 */
export function createContext(services: Services, actor: Actor, options: { readOnly?: boolean; client?: Client } = {}): Context {
  const { config } = services;
  let repoPath = repoPaths.get(config);
  if (!repoPath) repoPaths.set(config, (repoPath = (projectId) => repositoryPath(config, projectId)));
  const ctx: Context = { db: services.db, config, events: services.events, actor, now, repoPath, client: options.client };
  return options.readOnly ? { ...ctx, memo: new Map() } : ctx;
}

/**
 * `load()` once per key in a read-only request's context (every call shares the first call's
 * promise; a rejected one is forgotten), or each time where the context has no memo. The key
 * must name everything the result depends on besides the context's actor.
 */
export function memoized<T>(ctx: Context, key: string, load: () => Promise<T>): Promise<T> {
  const memo = ctx.memo;
  if (!memo) return load();
  let value = memo.get(key) as Promise<T> | undefined;
  if (!value) {
    value = load();
    memo.set(key, value);
    value.catch(() => memo.delete(key));
  }
  return value;
}
