/**
 * Cross-site requests (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): a browser must never drive the API from another site.
 *
 * - API writes (any method but GET, HEAD and OPTIONS under `/~api`) that a browser marks as coming
 *   from another origin — `Sec-Fetch-Site` other than `same-origin` or `none` (`same-site` is
 *   another origin too), or an `Origin` that is not this server's — are refused with 403
 *   `GITLOOM_ERR_CROSS_SITE` before any credentials are checked. Clients that send neither header
 *   (git, curl, scripts, OneDev's own clients) are not affected.
 * - `WWW-Authenticate: Basic` is offered only to clients that are not browsers, so no browser
 *   learns Basic credentials it could replay on a cross-site form post.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Config } from '../config.js';
import { Forbidden } from '../errors.js';

/** The challenge of a 401 (docs/compatibility.md#gitloom-differs-errors). */
export const BASIC_CHALLENGE = 'Basic realm="Gitloom"';

/** Methods that change nothing and are never refused as cross-site. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `Sec-Fetch-Site` values of a request made by this server's own pages or typed by the user. */
const TRUSTED_FETCH_SITES = new Set(['same-origin', 'none']);

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Whether a request comes from a web browser. Browsers send Fetch Metadata with every request
 * (`Sec-Fetch-Site`, `Sec-Fetch-Mode`, `Sec-Fetch-Dest`) and `Origin` with every cross-origin or
 * non-GET one; git, curl and API libraries send none of them — except Node's `fetch`, which
 * sends `Sec-Fetch-Mode: cors` alone on every request, so that value without the others is not
 * a browser.
 */
export function isBrowserRequest(request: FastifyRequest): boolean {
  if (
    header(request, 'sec-fetch-site') !== undefined ||
    header(request, 'sec-fetch-dest') !== undefined ||
    header(request, 'sec-fetch-user') !== undefined ||
    header(request, 'origin') !== undefined
  )
    return true;
  const mode = header(request, 'sec-fetch-mode');
  return mode !== undefined && mode.trim().toLowerCase() !== 'cors';
}

/**
 * Adds `WWW-Authenticate: Basic realm="Gitloom"` to a 401 answer unless the request comes from a
 * browser ({@link isBrowserRequest}): a browser would prompt for the credentials, then send them
 * with every later request to this server, even one a page of another site makes it send.
 */
export function offerBasicChallenge(request: FastifyRequest, reply: FastifyReply): void {
  if (!isBrowserRequest(request)) reply.header('WWW-Authenticate', BASIC_CHALLENGE);
}

/** The origin (`scheme://host[:port]`) of a URL, or null when it is not one. */
function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Whether an `Origin` header names this server: the origin of the configured server URL
 * (`GITLOOM_SERVER_URL`), or the one the request was addressed to — its protocol and `Host`
 * (with `GITLOOM_TRUST_PROXY`, the proxy's `X-Forwarded-Proto` and `X-Forwarded-Host`), so a
 * server reached under another name or behind a reverse proxy still knows its own pages.
 */
export function isOwnOrigin(origin: string, request: FastifyRequest, serverUrl: string): boolean {
  const given = originOf(origin);
  if (given === null) return false;
  return given === originOf(serverUrl) || given === originOf(`${request.protocol}://${request.host}`);
}

/** Whether a request is addressed to the API: its path or the route that took it is under `/~api`. */
function isApiRequest(request: FastifyRequest): boolean {
  const path = request.url.split('?')[0];
  return path === '/~api' || path.startsWith('/~api/') || (request.routeOptions.url?.startsWith('/~api') ?? false);
}

/**
 * The reason a request is refused as cross-site, or null when it is not: a write to the API
 * whose `Sec-Fetch-Site` is neither `same-origin` nor `none`, or whose `Origin` is present and
 * not this server's ({@link isOwnOrigin}).
 */
export function crossSiteRefusal(request: FastifyRequest, serverUrl: string): string | null {
  if (SAFE_METHODS.has(request.method) || !isApiRequest(request)) return null;
  const site = header(request, 'sec-fetch-site');
  if (site !== undefined && !TRUSTED_FETCH_SITES.has(site.trim().toLowerCase())) {
    return `Cross-site request refused: the API takes changes only from this server's pages or from clients that are not browsers (Sec-Fetch-Site: ${site})`;
  }
  const origin = header(request, 'origin');
  if (origin !== undefined && !isOwnOrigin(origin, request, serverUrl)) {
    return `Cross-site request refused: the API takes changes only from this server's pages or from clients that are not browsers (Origin: ${origin})`;
  }
  return null;
}

/**
 * An `onRequest` hook refusing cross-site API writes (see {@link crossSiteRefusal}) with 403
 * problem+json `GITLOOM_ERR_CROSS_SITE`. Register it before authentication: credentials a
 * browser attaches to a forged request are never even checked. Reads `config.serverUrl` on every
 * request (it may be set after start).
 */
export function refuseCrossSiteWrites(config: Pick<Config, 'serverUrl'>) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const refusal = crossSiteRefusal(request, config.serverUrl);
    done(refusal === null ? undefined : new Forbidden(refusal, { code: 'GITLOOM_ERR_CROSS_SITE' }));
  };
}
