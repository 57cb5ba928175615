import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body is a single string, taken raw whatever the content type (CONTRACT.md §1). */
    textBody?: boolean;
  }
}

/**
 * Body parsing: JSON routes parse `application/json` safely (prototype poisoning refused);
 * routes marked `config: { textBody: true }` receive the raw text of any content type.
 * Other media types reach JSON routes as strings and fail their schema with a 400.
 */
export const bodiesPlugin = fp(async (app: FastifyInstance) => {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (request.routeOptions.config.textBody) return done(null, text);
    return parseJson(request, text, done);
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
}, { name: 'bodies' });

/**
 * The value of a text body: raw text, or the decoded string when the body is a valid JSON
 * string literal (`"My title"` → `My title`). A missing body is the empty string.
 */
export function textBody(body: unknown): string {
  if (typeof body !== 'string') return '';
  const trimmed = body.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    try {
      const decoded: unknown = JSON.parse(trimmed);
      if (typeof decoded === 'string') return decoded;
    } catch {
      // not a JSON literal: the raw text is the value
    }
  }
  return body;
}
