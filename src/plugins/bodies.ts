import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequest } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body is a single string, taken raw whatever the content type (docs/compatibility.md#gitloom-differs-mount-and-media-types). */
    textBody?: boolean;
  }
}

/** Deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64;

const nulByte = (where: string): BadRequest => new BadRequest(`${where} contains a NUL byte`, { code: 'GITLOOM_ERR_NUL_BYTE' });

/**
 * Checks a parsed JSON value: nesting at most {@link MAX_JSON_DEPTH} deep and no NUL byte in
 * any string or key. Walks at most that deep, so hostile nesting costs no stack.
 *
 * @throws BadRequest naming the problem.
 */
export function checkJsonValue(value: unknown, depth = 0): void {
  if (typeof value === 'string') {
    if (value.includes('\0')) throw nulByte('A JSON string');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_JSON_DEPTH) throw new BadRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`, { code: 'GITLOOM_ERR_JSON_TOO_DEEP' });
  if (Array.isArray(value)) {
    for (const item of value) checkJsonValue(item, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\0')) throw nulByte('A JSON key');
    checkJsonValue(item, depth + 1);
  }
}

/**
 * Body parsing: JSON routes parse `application/json` safely (prototype poisoning refused,
 * nesting and NUL bytes checked by {@link checkJsonValue}); routes marked `config: { textBody:
 * true }` receive the raw text of any content type (NUL bytes refused). Other media types reach
 * JSON routes as strings and fail their schema with a 400.
 */
export const bodiesPlugin = fp(
  async (app: FastifyInstance) => {
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser(['application/json', 'text/plain']);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (request.routeOptions.config.textBody) return done(text.includes('\0') ? nulByte('The body') : null, text);
      return parseJson(request, text, (error, value) => {
        if (error) return done(error);
        try {
          checkJsonValue(value);
        } catch (invalid) {
          return done(invalid as BadRequest);
        }
        return done(null, value);
      });
    });
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      return done(text.includes('\0') ? nulByte('The body') : null, text);
    });
  },
  { name: 'bodies' },
);

/**
 * The value of a text body: raw text, or the decoded string when the body is a valid JSON
 * string literal (`"My title"` → `My title`). A missing body is the empty string.
 *
 * @throws BadRequest when the decoded text holds a NUL byte.
 */
export function textBody(body: unknown): string {
  if (typeof body !== 'string') return '';
  const trimmed = body.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(trimmed);
    } catch {
      // not a JSON literal: the raw text is the value
    }
    if (typeof decoded === 'string') {
      if (decoded.includes('\0')) throw nulByte('The text');
      return decoded;
    }
  }
  return body;
}
