import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequest } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Query parameter names the route declares (filled in from its querystring schema). */
    allowedQuery?: Set<string>;
    /** Every query param is accepted (`/trigger-job`: extra params are job params). */
    anyQueryParams?: boolean;
  }
}

/**
 * Rejects undeclared query parameters with 400 `Unexpected query params: [a, b]`
 * (docs/compatibility.md#gitloom-differs-pagination-and-query-parameters, docs/compatibility.md#platform-pagination). Routes with `config: {
 * anyQueryParams: true }` are exempt.
 */
export const queryParamsPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      const schema = route.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
      route.config = { ...(route.config ?? {}), allowedQuery: new Set(Object.keys(schema?.properties ?? {})) };
    });
    app.addHook('preValidation', (request, _reply, done) => {
      // no query string, no query params to check (and no route options to build)
      if (!request.url.includes('?')) return done();
      const { allowedQuery: allowed, anyQueryParams } = request.routeOptions.config;
      if (!allowed || anyQueryParams) return done();
      const unexpected = Object.keys(request.query as object).filter((key) => !allowed.has(key));
      done(unexpected.length > 0 ? new BadRequest(`Unexpected query params: [${unexpected.join(', ')}]`) : undefined);
    });
  },
  { name: 'query-params' },
);
