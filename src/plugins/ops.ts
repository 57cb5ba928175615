import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Forbidden, Unauthorized } from '../errors.js';
import { readiness } from '../ops/health.js';
import type { Metrics } from '../ops/metrics.js';
import type { Services } from '../domain/context.js';
import { resolveActor } from './auth.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `/~metrics` access: the configured bearer token, or an administrator's credentials. */
async function requireMetricsAccess(services: Services, request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization ?? '';
  const token = services.config.metricsToken;
  if (token && /^bearer /i.test(header) && sameSecret(header.slice(7).trim(), token)) return;
  const actor = await resolveActor(services, request);
  if (actor.userId <= 0) throw new Unauthorized();
  if (!actor.isAdmin) throw new Forbidden('Metrics are restricted to administrators');
}

/**
 * What every completed request adds to the metrics, for {@link RequestLog}: a count
 * and duration by method, route pattern (`unmatched` when no route matched) and status; a git
 * smart-HTTP post adds its bytes to the transfer counters (`push` received, `fetch` sent).
 */
export function requestMetrics(metrics: Metrics): (request: FastifyRequest, reply: FastifyReply) => void {
  // Bytes a socket had moved when its previous git request ended: requests on a connection are
  // serial, so the difference at the end of a git request is that request's traffic.
  const marks = new WeakMap<object, { read: number; written: number }>();
  return (request, reply) => {
    const method = request.method;
    metrics.observeRequest(method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    // only git's requests move the marks (a git client's connection carries nothing else): a
    // smart-HTTP exchange is GET …/info/refs, then POSTs
    if (method !== 'POST' && !request.url.includes('/info/refs')) return;
    const socket = request.raw.socket;
    let mark = marks.get(socket);
    if (!mark) marks.set(socket, (mark = { read: 0, written: 0 }));
    const read = socket.bytesRead - mark.read;
    const written = socket.bytesWritten - mark.written;
    mark.read = socket.bytesRead;
    mark.written = socket.bytesWritten;
    if (method === 'POST') {
      const path = request.url.split('?')[0];
      if (path.endsWith('/git-receive-pack')) metrics.observeGitTransfer('push', read);
      else if (path.endsWith('/git-upload-pack')) metrics.observeGitTransfer('fetch', written);
    }
  };
}

/**
 * Operations endpoints: `GET /~health/live` (200 while the process serves),
 * `GET /~health/ready` (200 or 503 with each check), `GET /~metrics` (Prometheus text;
 * administrators or `Authorization: Bearer $GITLOOM_METRICS_TOKEN`).
 */
export const opsPlugin = fp(
  async (app: FastifyInstance, { services, metrics }: { services: Services; metrics: Metrics }) => {
    const hide = { hide: true };
    app.get('/~health/live', { schema: hide }, async () => ({ status: 'UP' }));
    app.get('/~health/ready', { schema: hide }, async (_request, reply) => {
      const report = await readiness(services.db, services.config.dataDir);
      reply.code(report.ready ? 200 : 503);
      return { status: report.ready ? 'UP' : 'DOWN', checks: report.checks };
    });
    app.get('/~metrics', { schema: hide }, async (request, reply) => {
      await requireMetricsAccess(services, request);
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    });
  },
  { name: 'ops', dependencies: ['errors'] },
);
