/**
 * The page contract of the web UI: what a page handler receives ({@link PageContext}), what it
 * returns ({@link PageResult}) and how a page module declares its routes ({@link PageModule}).
 * See src/web/app.ts for the conventions.
 */
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { Context } from '../domain/context.js';
import type { ProjectPermissions } from '../domain/projects/index.js';
import type { projectByPath } from '../domain/repositories/index.js';
import { GitloomError } from '../errors.js';

/** The signed-in user of a page (null: anonymous). */
export interface PageUser {
  id: number;
  name: string;
  isAdmin: boolean;
  /** Unread notifications of the inbox, counted once a page is to be rendered (the header shows it). */
  unreadNotifications?: number;
  /** The version of the user's avatar (its URL, `/~avatars/<id>?v=<version>`). */
  avatarVersion: number;
}

/** Everything a page handler needs; built once per request by src/web/app.ts. */
export interface PageContext {
  request: FastifyRequest;
  reply: FastifyReply;
  /** The domain context acting as the visitor (session user, Basic credentials or anonymous). */
  ctx: Context;
  /** The signed-in user, null for anonymous visitors. */
  user: PageUser | null;
  /**
   * The CSRF token every POST form must send as the field `_csrf` (use `<PostForm>`, which
   * adds it): the session's synchronizer token, or for anonymous visitors the pre-session token
   * of the `gitloom_csrf` cookie.
   */
  csrfToken: string;
  /** Path parameters of the route (`:name` and `*`). */
  params: Record<string, string>;
  /** Query string parameters (the first value of each). */
  query: Record<string, string>;
  /** The fields of a submitted `application/x-www-form-urlencoded` form (POST), else empty. */
  form: Record<string, string>;
}

/** The context of a page under `/<project path>`: the project, visible to the visitor. */
export interface ProjectPageContext extends PageContext {
  project: Awaited<ReturnType<typeof projectByPath>>['project'];
  permissions: ProjectPermissions;
}

/** A redirect answer (303 after a POST, 302 otherwise). */
export interface Redirect {
  redirect: string;
}

/**
 * A response that is not a page (a download, a streamed build log). It is sent with
 * `X-Content-Type-Options: nosniff`, `Cache-Control: no-store` and a `sandbox` CSP, so no body
 * ever runs as a document of our origin; downloads add `Content-Disposition: attachment`.
 */
export interface RawResponse {
  raw: {
    /** The Content-Type. */
    type: string;
    body: Readable | string | Buffer;
    /** More headers (`Content-Length`, `Content-Disposition`, …). */
    headers?: Record<string, string>;
  };
}

/** What a page handler returns: a full page (`<Layout>`) to render, a redirect, or a raw response. */
export type PageResult = VNode | Redirect | RawResponse;

/**
 * Builds a redirect answer to a URL of this server (`/…`). Every redirect a page answers goes
 * through {@link safeRedirect} when it is sent: one that would leave the server goes to `/`.
 */
export function redirect(location: string): Redirect {
  return { redirect: location };
}

/**
 * Runs what a submitted form asks for, then answers with `done`'s page (usually a redirect). A
 * refusal the visitor can act on — a GitloomError with a 4xx status other than 401, which sends
 * the visitor to sign in through the error page — shows the form again instead: `show(message)`
 * answered with the refusal's status, the caller keeping the submitted values. Any other error
 * propagates (the error page).
 */
export async function submitForm<T>(
  page: PageContext,
  run: () => Promise<T>,
  done: (result: T) => PageResult | Promise<PageResult>,
  show: (message: string) => PageResult | Promise<PageResult>,
): Promise<PageResult> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    if (!(error instanceof GitloomError) || error.status >= 500 || error.status === 401) throw error;
    page.reply.code(error.status);
    return show(error.message);
  }
  return done(result);
}

/** Builds a raw (non-HTML) answer; see {@link RawResponse}. */
export function rawResponse(type: string, body: RawResponse['raw']['body'], headers: Record<string, string> = {}): RawResponse {
  return { raw: { type, body, headers } };
}

/** Who may open a page. */
export type Access =
  /** Anybody the server lets in: anonymous visitors only when anonymous access is on (default). */
  | 'visitor'
  /** Signed-in users only: anonymous visitors go to `/~login?redirect=…`. */
  | 'user'
  /** Everybody, even when anonymous access is off (the sign-in page itself). */
  | 'public';

/** A page outside projects, at an absolute path such as `/~projects` or `/~pulls/:id`. */
export interface PageRoute {
  method: 'GET' | 'POST';
  /** Fastify path syntax; must start with `/~` (or be `/`): other paths belong to projects. */
  path: string;
  access?: Access;
  /**
   * How errors are answered: `page` (default) the error page; `problem` problem+json as the API
   * (src/plugins/errors.ts), for downloads that tools fetch (an archive).
   */
  errors?: 'page' | 'problem';
  handler(page: PageContext): Promise<PageResult>;
}

/**
 * A page of a project, at a path relative to the project: `''` for `/<project>` itself,
 * `/~files/*`, `/~pulls/:number`, … (find-my-way syntax). The project is resolved and its
 * `access` permission checked before the handler runs (invisible → 404 page).
 */
export interface ProjectPageRoute {
  method: 'GET' | 'POST';
  path: string;
  access?: Access;
  handler(page: ProjectPageContext): Promise<PageResult>;
}

/** One module of src/web/pages: a set of related pages. */
export interface PageModule {
  pages?: PageRoute[];
  projectPages?: ProjectPageRoute[];
}

/**
 * The pages of a kind of conversation (`issues`, `pulls`): the list across projects at `/~<kind>`,
 * the project's list at `/<project>/~<kind>`, the new form at `/<project>/~<kind>/new` and its
 * POST (signed-in users), then the kind's own `more` project pages (its detail page and actions).
 */
export function conversationPages(
  kind: string,
  pages: {
    all: PageRoute['handler'];
    project: ProjectPageRoute['handler'];
    newForm: ProjectPageRoute['handler'];
    create: ProjectPageRoute['handler'];
  },
  more: ProjectPageRoute[],
): PageModule {
  return {
    pages: [{ method: 'GET', path: `/~${kind}`, handler: pages.all }],
    projectPages: [
      { method: 'GET', path: `/~${kind}`, handler: pages.project },
      { method: 'GET', path: `/~${kind}/new`, access: 'user', handler: pages.newForm },
      { method: 'POST', path: `/~${kind}/new`, access: 'user', handler: pages.create },
      ...more,
    ],
  };
}

/** The base redirect targets are resolved against: any origin would do, this one is nobody's. */
const REDIRECT_BASE = new URL('http://gitloom.invalid/');

/**
 * A redirect target of this server, from user input (`?redirect=`, a form's `return` field) or a
 * page: the target is resolved as a browser resolves a `Location` (`new URL(target, base)`, which
 * drops tabs and newlines and reads `\` as `/`); it is kept only when it stays on the base's
 * origin, as its path, query and fragment (`/some/page?x=1`), and that path cannot be read as
 * another host (`//host`). Anything else — `//evil`, `/\evil`, `/<tab>/evil`, `https://evil`,
 * `javascript:…` — is `/`.
 *
 * @example safeRedirect('/~pulls?query=open') === '/~pulls?query=open'; safeRedirect('/\t/evil.example') === '/'
 */
export function safeRedirect(target: string | undefined): string {
  if (!target) return '/';
  let url: URL;
  try {
    url = new URL(target, REDIRECT_BASE);
  } catch {
    return '/';
  }
  if (url.origin !== REDIRECT_BASE.origin || url.username || url.password) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : '/';
}
