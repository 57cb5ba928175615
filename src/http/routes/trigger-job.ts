import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { triggerJob } from '../../domain/builds/index.js';
import { BadRequest } from '../../errors.js';
import { CreatedId } from '../schemas/common.js';

const tags = ['Trigger Job'];
const REQUIRED = ['project', 'job', 'access-token'] as const;
/** Query params of the call itself; every other one is a job param. */
const OWN = new Set<string>([...REQUIRED, 'branch', 'tag']);

/** The single value of a query param (the first of repeated ones). */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `/~api/trigger-job` (docs/compatibility.md#builds-trigger-job): GET or POST, everything in the
 * query string, any body ignored. No anonymous check (the token is in the query) and no
 * unknown-query-param check (extra params are job params); missing `project`, `job` or
 * `access-token` is 400 `Missing query params: [..]`.
 */
export const triggerJobRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const handler = async (request: { ctx: Parameters<typeof triggerJob>[0]; query: unknown }) => {
    const query = request.query as Record<string, string | string[] | undefined>;
    const missing = REQUIRED.filter((name) => !single(query[name]));
    if (missing.length > 0) throw new BadRequest(`Missing query params: [${missing.join(', ')}]`);
    const params: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(query)) {
      if (!OWN.has(name) && value !== undefined) params[name] = Array.isArray(value) ? value : [value];
    }
    return triggerJob(request.ctx, {
      project: single(query.project)!,
      job: single(query.job)!,
      accessToken: single(query['access-token'])!,
      branch: single(query.branch),
      tag: single(query.tag),
      params,
    });
  };
  const config = { anonymousAccess: true, anyQueryParams: true, textBody: true };
  const schema = { tags, summary: 'Trigger Job', response: { 200: CreatedId } };
  app.get('/trigger-job', { config, schema }, handler);
  app.post('/trigger-job', { config, schema }, handler);
};
