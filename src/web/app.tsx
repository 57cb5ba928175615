/**
 * The web UI (docs/compatibility.md#gitloom-differs-web-ui): server-rendered pages on the API's server and port, over the same domain
 * layer as the API (one rule, two faces). Registered by src/app.ts after the API.
 *
 * # Conventions (follow them for every new page)
 *
 * **Layer.** src/web calls domain functions only (eslint forbids src/db, src/git, src/ci
 * imports): a page reads and changes data exactly as the matching API route does, so
 * permissions and validation messages are the API's. Need a read the domain lacks? Add a
 * domain function with a docstring.
 *
 * **A page module** is one file (or folder) under src/web/pages exporting a {@link PageModule},
 * listed in src/web/pages/index.ts:
 * - `pages`: routes outside projects, absolute paths starting with `/~` (`/~pulls`,
 *   `/~administration/users/:id`), registered as Fastify routes;
 * - `projectPages`: routes under a project, paths relative to it in find-my-way syntax: `/` for
 *   `/<project>`, `/~files/*`, `/~pulls/:number`. The project path is everything before the
 *   first segment starting with `~`; the dispatcher resolves the project with the visitor's
 *   permissions (invisible or missing → 404 page) and passes `page.project` and
 *   `page.permissions`. Check further privileges with the domain (`deny`, domain functions that
 *   throw Forbidden).
 * Git smart HTTP (`/<project>[.git]/info/refs`, `…/git-upload-pack`, `…/git-receive-pack`) and
 * `/~api/…` keep their routes: the web's catch-all route carries the `webPage` constraint,
 * derived from the URL, so the two catch-alls never compete.
 *
 * **Rendering.** A handler returns a `<Layout page={page} title="…">` tree — for project pages
 * `<ProjectLayout page={page} tab="pulls" title="…">` (breadcrumbs and project tabs) — (typed JSX,
 * escaped by preact-render-to-string) or `redirect('/…')`; list pages put a `<QueryBox>` on top; set another status with `page.reply.code(n)`
 * before returning. Downloads and streams (artifacts, a followed build log) return
 * `rawResponse(type, body, headers)`: sent with `nosniff` and a `sandbox` CSP, never as a page. Never build HTML from strings; Markdown goes through `<Markdown>`, code
 * through `highlightFile` (the only `dangerouslySetInnerHTML` users). Styles live in
 * src/web/assets/site.css (hashed URL, light/dark by `prefers-color-scheme`), an area's own
 * additions in its own file linked with `<Layout styles={['settings.css']}>`;
 * progressive enhancement is a small ES module in src/web/assets loaded with
 * `<Layout scripts={['name.js']}>` (no inline script: the CSP forbids it; total JS < 60 KB gz).
 *
 * **Forms.** Every POST form is a `<PostForm page={page} action="…">`: it carries the CSRF token
 * (`_csrf`), which this plugin checks on every POST before the handler runs (missing or wrong →
 * 403 page). Fields are read from `page.form` (a `multipart/form-data` form's files with
 * `uploadedFiles(page.request)` of src/web/multipart.ts); answer a successful POST with a redirect (303).
 * Every input has a `<label>` (`<Field>`).
 *
 * **Access.** `access: 'visitor'` (default) lets anonymous visitors in only when anonymous
 * access is on, else redirects them to `/~login?redirect=<url>`; `'user'` always needs a
 * signed-in user; `'public'` is for the sign-in page. A domain Unauthorized thrown for an
 * anonymous visitor also redirects to the sign-in page; any other GitloomError renders the
 * error page with its status and message.
 *
 * **Sessions.** Sign-in (`/~login`) checks credentials with the API's authentication
 * (password, or an access token as password) and stores a session in the database
 * (src/domain/auth/sessions.ts); the browser holds its token in a signed HttpOnly SameSite=Lax
 * cookie. Requests with API credentials (Basic/Bearer) are served as that user too. The session
 * cookie is read only by this plugin: the API under `/~api` never accepts it (so the API needs no
 * CSRF protection).
 */
import { STATUS_CODES } from 'node:http';
import cookie from '@fastify/cookie';
import FindMyWay from 'find-my-way';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findSession } from '../domain/auth/index.js';
import { ANONYMOUS_ID, type Services } from '../domain/context.js';
import { unreadNotificationCount } from '../domain/notifications/index.js';
import { projectByPath } from '../domain/repositories/index.js';
import { getSecuritySetting } from '../domain/settings/index.js';
import { avatarVersions } from '../domain/users/index.js';
import { credentialsHeader, requestClient, requestContext } from '../plugins/auth.js';
import { sendError, sendRetryAfter } from '../plugins/errors.js';
import { Forbidden, GitloomError, NotFound, Unauthorized } from '../errors.js';
import { assetAt } from './assets.js';
import { ErrorPage } from './components/errors.js';
import { safeRedirect, type Access, type PageContext, type PageResult, type PageUser, type ProjectPageRoute } from './page.js';
import { multipartParser } from './multipart.js';
import { pageModules } from './pages/index.js';
import { CONTENT_SECURITY_POLICY, renderDocument } from './render.js';
import { CSRF_FIELD, csrfMatches, preSessionCsrfToken, SESSION_COOKIE, signedCookie, signingKey } from './session.js';

export type { PageModule } from './page.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The web visitor, resolved by the web plugin (pages only): the user, and when signed in by
     * the session cookie, that session's CSRF token and cookie token.
     */
    webVisitor: { user: PageUser | null; sessionCsrfToken: string | null; sessionToken: string | null };
  }
}

/** Whether a URL is served by the web's catch-all route (not git smart HTTP, not the API). */
export function isPageUrl(url: string): boolean {
  // derived for every request: the API's own prefix answers without splitting the URL
  if (url.startsWith('/~api/')) return false;
  const path = url.split('?')[0];
  if (path === '/~api') return false;
  if (!/\/(info\/refs|git-upload-pack|git-receive-pack)$/.test(path) && !/\/info\/lfs\//.test(path)) return true;
  // a git endpoint path inside a `~` sub-route (e.g. a file named info/refs) is a page
  return path.split('/').some((segment) => segment.startsWith('~'));
}

/** The route constraint strategy telling pages from git smart HTTP on `/*`. */
type Strategy = Parameters<FastifyInstance['addConstraintStrategy']>[0];
type Stored = NonNullable<ReturnType<ReturnType<Strategy['storage']>['get']>>;
const webPageStrategy: Strategy = {
  name: 'webPage',
  storage() {
    const handlers = new Map<string, Stored>();
    return {
      get: (v: string) => handlers.get(v) ?? null,
      set: (v: string, store: Stored) => {
        handlers.set(v, store);
      },
    };
  },
  deriveConstraint: (request) => (isPageUrl(request.url ?? '/') ? 'page' : undefined),
  mustMatchWhenDerived: false,
};

function firstValues(source: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (source && typeof source === 'object') {
    for (const [key, value] of Object.entries(source)) {
      const first = Array.isArray(value) ? value[0] : value;
      if (typeof first === 'string') out[key] = first;
    }
  }
  return out;
}

function pageContext(request: FastifyRequest, reply: FastifyReply, params: Record<string, string> = {}): PageContext {
  const visitor = request.webVisitor ?? { user: null, sessionCsrfToken: null, sessionToken: null };
  return {
    request,
    reply,
    ctx: request.ctx,
    user: visitor.user,
    csrfToken: visitor.sessionCsrfToken ?? preSessionCsrfToken(request, reply),
    params,
    query: firstValues(request.query),
    form: request.method === 'POST' ? firstValues(request.body) : {},
  };
}

const loginUrl = (request: FastifyRequest) => `/~login?${new URLSearchParams({ redirect: request.url })}`;

function sendHtml(reply: FastifyReply, html: string): FastifyReply {
  return (
    reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'same-origin')
      .header('Cache-Control', 'no-store')
      // encoded once here: a string body would be measured (Content-Length) and encoded in two passes
      .send(Buffer.from(html))
  );
}

function sendResult(page: PageContext, result: PageResult): FastifyReply {
  // every target, a page's own or one from input, stays on this server
  if ('redirect' in result) return page.reply.redirect(safeRedirect(result.redirect), page.request.method === 'POST' ? 303 : 302);
  if ('raw' in result) {
    // safe defaults first: a handler may narrow them (a raw file's own CSP), never drop them
    return page.reply
      .type(result.raw.type)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', 'sandbox')
      .header('Cache-Control', 'no-store')
      .headers(result.raw.headers ?? {})
      .send(result.raw.body);
  }
  return sendHtml(page.reply, renderDocument(result));
}

/** The pages a user who must enrol a second factor may open: enrolment itself, signing out, and avatars (the header's). */
const ENROLMENT_PAGES = /^\/~(?:my\/two-factor|logout|login|avatars)(?:[/?]|$)/;

/**
 * Runs the checks every page shares (CSRF on POST, access; a user whom `enforce2FA` applies to
 * without a second factor is sent to enrolment, docs/security.md#two-factor-authentication), then the handler.
 */
async function runPage(page: PageContext, access: Access, handler: (page: PageContext) => Promise<PageResult>): Promise<FastifyReply> {
  if (page.request.method === 'POST' && !csrfMatches(page.csrfToken, page.form[CSRF_FIELD])) {
    throw new Forbidden('Missing or invalid CSRF token: reload the page and submit the form again');
  }
  if (page.user === null && access !== 'public') {
    if (access === 'user' || !(await getSecuritySetting(page.ctx)).enableAnonymousAccess) return page.reply.redirect(loginUrl(page.request));
  }
  if (page.ctx.actor.mustEnrolSecondFactor && !ENROLMENT_PAGES.test(page.request.url)) return page.reply.redirect('/~my/two-factor');
  const result = await handler(page);
  // counted after the handler, so a thread the page just read is no longer unread
  if (page.user && !('redirect' in result) && !('raw' in result)) page.user.unreadNotifications = await unreadNotificationCount(page.ctx);
  return sendResult(page, result);
}

/**
 * The `onRequest` step resolving the web visitor: a signed session cookie of an anonymous
 * request makes the request its user's (actor and context); `request.webVisitor` holds the user
 * and the session's tokens.
 */
function visitorResolver(services: Services) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.url.startsWith('/~assets/')) return;
    let sessionCsrfToken: string | null = null;
    let sessionToken: string | null = null;
    const token = request.actor.userId === ANONYMOUS_ID ? signedCookie(request, SESSION_COOKIE) : null;
    if (token) {
      const session = await findSession(services.db, token, Date.now(), requestClient(request));
      if (session) {
        request.actor = session.actor;
        request.ctx = requestContext(services, request, session.actor);
        sessionCsrfToken = session.csrfToken;
        sessionToken = token;
      }
    }
    const { actor } = request;
    const user: PageUser | null =
      actor.userId === ANONYMOUS_ID
        ? null
        : {
            id: actor.userId,
            name: actor.name,
            isAdmin: actor.isAdmin,
            avatarVersion: (await avatarVersions(services.db, [actor.userId])).get(actor.userId) ?? 0,
          };
    request.webVisitor = { user, sessionCsrfToken, sessionToken };
  };
}

/** The pages' error handler: the error page with the error's status and message (or the sign-in redirect). */
async function sendErrorPage(error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const page = pageContext(request, reply);
  // a visitor who sent no credentials is sent to sign in; wrong credentials sent with every
  // request (a script, a stale header) get the 401 page, as the sign-in page would refuse them too
  if (error instanceof Unauthorized && page.user === null && !credentialsHeader(request)) return reply.redirect(loginUrl(request));
  let status: number;
  let title: string;
  let message: string;
  if (error instanceof GitloomError) {
    ({ status, title, message } = error);
    sendRetryAfter(reply, error);
  } else if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    status = error.statusCode;
    title = STATUS_CODES[status] ?? 'Bad Request';
    message = error.message;
  } else {
    request.log.error({ err: error }, 'unexpected error');
    status = 500;
    title = 'Internal Server Error';
    message = 'Internal server error';
  }
  reply.code(status);
  return sendHtml(reply, renderDocument(<ErrorPage page={page} status={status} title={title} message={message} />));
}

/**
 * Registers the page modules' routes: `pages` as Fastify routes, `projectPages` behind one
 * catch-all route that splits the URL at its first `~` segment into the project path and the
 * page's path, resolves the project and runs the matching page.
 */
function registerPages(app: FastifyInstance): void {
  const projectRouter = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1000 });
  for (const module of pageModules) {
    for (const route of module.pages ?? []) {
      app.route({
        method: route.method,
        url: route.path,
        handler: (request, reply) => runPage(pageContext(request, reply, firstValues(request.params)), route.access ?? 'visitor', route.handler),
        ...(route.errors === 'problem' && { errorHandler: sendError }),
      });
    }
    for (const route of module.projectPages ?? []) {
      projectRouter.on(route.method, route.path, () => undefined, route);
    }
  }

  app.route({
    method: ['GET', 'POST'],
    url: '/*',
    constraints: { webPage: 'page' },
    handler: async (request, reply) => {
      const segments = (request.params as { '*': string })['*'].split('/').filter((s) => s !== '');
      const tilde = segments.findIndex((s) => s.startsWith('~'));
      const projectPath = (tilde < 0 ? segments : segments.slice(0, tilde)).join('/');
      const rest = `/${tilde < 0 ? '' : segments.slice(tilde).join('/')}`;
      const found = projectPath ? projectRouter.find(request.method as 'GET' | 'POST', rest) : null;
      if (!found) throw new NotFound(`Page not found: ${request.url.split('?')[0]}`);
      const route = found.store as ProjectPageRoute;
      const page = pageContext(request, reply, firstValues(found.params));
      return runPage(page, route.access ?? 'visitor', async () => {
        const { project, permissions } = await projectByPath(page.ctx, projectPath);
        return route.handler({ ...page, project, permissions });
      });
    },
  });
}

/** The web UI plugin (encapsulated): sessions, assets, pages and their error page. */
export async function webPlugin(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  await app.register(cookie, { secret: signingKey(services.config.dataDir) });
  app.addConstraintStrategy(webPageStrategy);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.addContentTypeParser('multipart/form-data', multipartParser(services.config.bodyLimit));
  app.decorateRequest('webVisitor', null as unknown as FastifyRequest['webVisitor']);
  app.addHook('onRequest', visitorResolver(services));
  app.setErrorHandler(sendErrorPage);

  // pages are not part of the REST API: none of them appears in its OpenAPI document
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

  app.get('/~assets/*', async (request, reply) => {
    const asset = assetAt(request.url.split('?')[0]);
    if (!asset) throw new NotFound('No such asset');
    return reply.type(asset.contentType).header('Cache-Control', 'public, max-age=31536000, immutable').send(asset.body);
  });

  registerPages(app);
}
