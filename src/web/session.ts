/**
 * The web UI's sessions and CSRF protection over @fastify/cookie signed cookies:
 *
 * - `gitloom_session`: the session token of src/domain/auth/sessions.ts (the row lives in the
 *   database, so any server process knows it); HttpOnly, SameSite=Lax, Path=/, Secure when the
 *   request came over https (directly or `X-Forwarded-Proto: https`).
 * - `gitloom_csrf`: a pre-session token for anonymous forms (the sign-in form), same flags.
 * - `gitloom_two_factor`: the token of a sign-in waiting for its second step
 *   (src/domain/auth/second-step.ts), same flags, for as long as that step waits.
 *
 * The signing key is `<data dir>/web-session.key` (32 random bytes, created on first start,
 * mode 0600), shared by processes sharing the data dir.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SECOND_STEP_TTL_MS } from '../domain/auth/index.js';

export const SESSION_COOKIE = 'gitloom_session';
export const CSRF_COOKIE = 'gitloom_csrf';
export const SECOND_STEP_COOKIE = 'gitloom_two_factor';
/** The form field carrying the CSRF token. */
export const CSRF_FIELD = '_csrf';

/**
 * The cookie signing key of a data dir, created when missing.
 * @throws the file system's error when the data dir is not writable.
 */
export function signingKey(dataDir: string): string {
  const file = path.join(dataDir, 'web-session.key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dataDir, { recursive: true });
    const key = randomBytes(32).toString('base64url');
    // 'wx': when two processes start at once, the loser reads the winner's key
    try {
      writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
      return key;
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
      return readFileSync(file, 'utf8').trim();
    }
  }
}

/** Whether the request reached us (or the proxy in front of us) over https. */
function isHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0].trim();
  return proto ? proto === 'https' : request.protocol === 'https';
}

const cookieOptions = (request: FastifyRequest, maxAgeSeconds?: number) => ({
  path: '/',
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: isHttps(request),
  signed: true,
  ...(maxAgeSeconds !== undefined && { maxAge: maxAgeSeconds }),
});

/** The verified value of a signed cookie, or null (missing or tampered). */
export function signedCookie(request: FastifyRequest, name: string): string | null {
  // cookies are parsed in onRequest: a request rejected before that has none
  const raw = request.cookies?.[name];
  if (!raw) return null;
  const result = request.unsignCookie(raw);
  return result.valid ? result.value : null;
}

/** Sets the session cookie after sign-in, kept by the browser until the session expires (`expireDate`, epoch ms). */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, expireDate: number): void {
  reply.setCookie(SESSION_COOKIE, token, cookieOptions(request, Math.max(0, Math.floor((expireDate - Date.now()) / 1000))));
}

/** Removes the session cookie (sign-out; the session itself ends in the database). */
export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
}

/** Sets the cookie of a sign-in waiting for its second step. */
export function setSecondStepCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(SECOND_STEP_COOKIE, token, cookieOptions(request, SECOND_STEP_TTL_MS / 1000));
}

/** Removes the cookie of a sign-in's second step (answered or abandoned). */
export function clearSecondStepCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SECOND_STEP_COOKIE, cookieOptions(request));
}

/** The anonymous visitor's pre-session CSRF token, set as a cookie when missing. */
export function preSessionCsrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = signedCookie(request, CSRF_COOKIE);
  if (existing) return existing;
  const token = randomBytes(24).toString('base64url');
  reply.setCookie(CSRF_COOKIE, token, cookieOptions(request));
  return token;
}

/** Constant-time equality of a submitted CSRF token and the expected one. */
export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The cookie keeping a started single sign-on until the provider sends the browser back
 * (docs/security.md#openid-connect): signed, HttpOnly, SameSite=Lax (the provider's redirect is a
 * top-level navigation), only under `/~sso`, ten minutes.
 */
export const SSO_COOKIE = 'gitloom_sso';
const SSO_PATH = '/~sso';

/** Keeps `value` (JSON) in the single sign-on cookie. */
export function setSsoCookie(request: FastifyRequest, reply: FastifyReply, value: unknown): void {
  reply.setCookie(SSO_COOKIE, Buffer.from(JSON.stringify(value)).toString('base64url'), { ...cookieOptions(request, 600), path: SSO_PATH });
}

/** The value of the single sign-on cookie, or null when missing, tampered or not JSON. */
export function ssoCookie(request: FastifyRequest): unknown {
  const raw = signedCookie(request, SSO_COOKIE);
  if (raw === null) return null;
  try {
    return JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

/** Removes the single sign-on cookie (the sign-in it kept ended). */
export function clearSsoCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SSO_COOKIE, { ...cookieOptions(request), path: SSO_PATH });
}
