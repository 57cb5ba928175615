import basicAuth from 'basic-auth';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { authenticateBasic, authenticateBearer, cachedBearerActor, noteTokenUse } from '../domain/auth/index.js';
import { refuseReadOnlyToken } from '../domain/actor.js';
import { LFS_TOKEN_SCHEME } from '../domain/lfs/index.js';
import { anonymous, ANONYMOUS_ID, createContext, type Actor, type Client, type Context, type Services } from '../domain/context.js';
import { getSecuritySetting } from '../domain/settings/index.js';
import { Unauthorized } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes its credentials elsewhere (`/trigger-job`): no anonymous check. */
    anonymousAccess?: boolean;
    /**
     * The route tells reads from changes itself (git's POST fetches, LFS downloads) and refuses a
     * read-only access token's changes on its own; elsewhere every request but GET, HEAD and
     * OPTIONS is a change.
     */
    checksReadOnlyTokens?: boolean;
  }
  interface FastifyRequest {
    /** The caller, resolved from the credentials (anonymous when none were sent). */
    actor: Actor;
    /** The domain context of this request. */
    ctx: Context;
  }
}

/** The credentials header: OneDev's own `OneDevAuthorization` wins over `Authorization`. */
export function credentialsHeader(request: FastifyRequest): string | undefined {
  const custom = request.headers.onedevauthorization;
  return (Array.isArray(custom) ? custom[0] : custom) ?? request.headers.authorization;
}

/** Methods that read only (RFC 9110 §9.2.1): a read-only access token may use them anywhere. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The request's client as the domain records it: its address and `User-Agent` (at most 512 characters). */
export function requestClient(request: FastifyRequest): Client {
  const agent = request.headers['user-agent'];
  return { address: request.ip, userAgent: agent ? agent.slice(0, 512) : null };
}

/**
 * A request's domain context for `actor`: read-only (memoized) for GET and HEAD, with the
 * request's client.
 */
export function requestContext(services: Services, request: FastifyRequest, actor: Actor): Context {
  return createContext(services, actor, { readOnly: request.method === 'GET' || request.method === 'HEAD', client: requestClient(request) });
}

/**
 * Resolves the caller from `Authorization: Basic …` (login name or email + password, or any
 * name + access token) or `Authorization: Bearer <token>` (docs/compatibility.md#gitloom-differs-authentication; schemes are
 * case-insensitive). A Git LFS token (`Gitloom-LFS …`) counts as no credentials here. Wrong,
 * malformed or incomplete credentials are 401; no credentials mean
 * anonymous; failed password sign-ins are limited per (account, client address) pair, with
 * ceilings per address and per account (429 or a delay, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input). Decorates
 * `request.actor` and `request.ctx`.
 */
export async function resolveActor(services: Services, request: FastifyRequest): Promise<Actor> {
  const header = credentialsHeader(request);
  if (!header) return anonymous;
  const now = Date.now();
  if (/^basic /i.test(header)) {
    const credentials = basicAuth.parse(`Basic ${header.slice(6).trim()}`);
    const name = credentials?.name.trim() ?? '';
    const secret = credentials?.pass.trim() ?? '';
    // credentials were sent, so they must be valid: never fall back to anonymous (an empty
    // name still goes with an access token)
    if (!credentials || !secret) throw new Unauthorized('Invalid credentials');
    return authenticateBasic(requestContext(services, request, anonymous), name, secret);
  }
  if (/^bearer /i.test(header)) {
    return authenticateBearer(services.db, header.slice(7).trim(), now);
  }
  // a Git LFS token is checked by the LFS endpoints alone (src/http/routes/lfs.ts): anywhere
  // else it is no credential at all
  if (header.toLowerCase().startsWith(`${LFS_TOKEN_SCHEME.toLowerCase()} `)) return anonymous;
  throw new Unauthorized('Unsupported authorization scheme');
}

/**
 * Authenticates every request of the scope it is registered in (before the scope's own hooks):
 * decorates `request.actor` and `request.ctx` (see {@link resolveActor}). Routes that check
 * credentials of their own (health, metrics) live outside that scope.
 */
export const authPlugin = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    app.decorateRequest('actor', null as unknown as Actor);
    app.decorateRequest('ctx', null as unknown as Context);
    const decorate = (request: FastifyRequest, actor: Actor) => {
      if (actor.token) {
        if (!SAFE_METHODS.has(request.method) && !request.routeOptions.config.checksReadOnlyTokens) refuseReadOnlyToken(actor);
        noteTokenUse(services.db, actor.token.id, requestClient(request), Date.now())?.catch((err: unknown) =>
          request.log.warn({ err }, 'the last use of an access token was not recorded'),
        );
      }
      request.actor = actor;
      request.ctx = requestContext(services, request, actor);
    };
    // a callback hook: a cached Bearer token (the common API call) costs no promise and no query
    app.addHook('onRequest', (request, _reply, done) => {
      const header = credentialsHeader(request);
      const cached = header && /^bearer /i.test(header) ? cachedBearerActor(services.db, header.slice(7).trim(), Date.now()) : undefined;
      if (cached) {
        try {
          decorate(request, cached);
        } catch (err) {
          return done(err as Error);
        }
        return done();
      }
      resolveActor(services, request)
        .then((actor) => decorate(request, actor))
        .then(() => done(), done);
    });
  },
  { name: 'auth', dependencies: ['errors'] },
);

/**
 * The API's anonymous check (docs/compatibility.md#platform-authentication): an anonymous POST/DELETE is 401; an
 * anonymous GET is 401 unless the security setting allows anonymous access. Register inside
 * the `/~api` scope so unknown routes still answer 404. Routes with `config: { anonymousAccess:
 * true }` are exempt (docs/compatibility.md#builds-trigger-job: `/trigger-job`).
 */
export function requireApiAccess(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  // a callback hook: signed-in callers pass without a promise or an extra tick
  if (request.actor.userId !== ANONYMOUS_ID || request.routeOptions.config.anonymousAccess) return done();
  if (request.method !== 'GET' && request.method !== 'HEAD') return done(new Unauthorized());
  getSecuritySetting(request.ctx).then((security) => done(security.enableAnonymousAccess ? undefined : new Unauthorized()), done);
}
