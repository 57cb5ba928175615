import http from 'node:http';
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from './domain/context.js';
import type { GitAccess } from './domain/repositories/index.js';
import { authPlugin, requireApiAccess } from './plugins/auth.js';
import { agentProtocolRoutes } from './http/routes/agent-protocol.js';
import { batchedWritesPlugin } from './plugins/batched-writes.js';
import { bodiesPlugin } from './plugins/bodies.js';
import { refuseCrossSiteWrites } from './plugins/cross-site.js';
import { clientErrorHandler, errorsPlugin, frameworkErrors, noRoute, problemSchema } from './plugins/errors.js';
import { inputPlugin } from './plugins/input.js';
import { lazyChildLogger, loggerOptions, RequestLog, type LogDestination } from './plugins/logging.js';
import { opsPlugin, requestMetrics } from './plugins/ops.js';
import { queryParamsPlugin } from './plugins/query-params.js';
import { validatorCompiler } from './http/schemas/validation.js';
import type { Metrics } from './ops/metrics.js';
import { apiRoutes } from './http/routes/index.js';
import { gitHttpRoutes } from './http/routes/git-http-wiring.js';
import { webPlugin } from './web/app.js';

export type App = FastifyInstance;

type Serializer = (data: unknown) => string;
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: { schema: object }) => Serializer;

/** Fastify's own response serializer compiler (fast-json-stringify), compiling on first use. */
function serializerCompiler(externalSchemas: unknown, options: unknown): (route: { schema: object }) => Serializer {
  let compile: ((route: { schema: object }) => Serializer) | undefined;
  return (route) => {
    let serialize: Serializer | undefined;
    return (data) => {
      if (!serialize) {
        if (!compile) {
          // the compiler Fastify itself depends on, resolved from Fastify's install
          const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
          const selector = fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory };
          compile = selector.SerializerSelector()(externalSchemas, options);
        }
        serialize = compile(route);
      }
      return serialize(data);
    };
  };
}

/**
 * The HTTP server: a request (headers and body) must arrive within `requestTimeoutMs` (0: no
 * limit), checked every quarter of that (at most every 30 s), or Node answers it through the
 * `clientError` event (408, see plugins/errors.ts). Idle keep-alive connections live 72 s.
 */
function httpServer(requestTimeoutMs: number, handler: http.RequestListener): http.Server {
  const server = http.createServer(
    {
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: requestTimeoutMs > 0 ? Math.max(100, Math.min(30_000, Math.floor(requestTimeoutMs / 4))) : 30_000,
    },
    handler,
  );
  server.keepAliveTimeout = 72_000;
  return server;
}

/** Response headers of the documentation instance that the outer server sets itself. */
const HOP_HEADERS = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding']);

/**
 * The rendered API documentation (swagger-ui) at `/~help/api`: its own Fastify instance, built on
 * the first visit from `document()`, the OpenAPI document (swagger-ui's routes and static files
 * cost start-up time and memory that most runs never use), answering through `inject`.
 */
function apiDocsRoutes(app: FastifyInstance, document: () => unknown): void {
  let docs: Promise<FastifyInstance> | undefined;
  const build = async () => {
    const { default: swaggerUi } = await import('@fastify/swagger-ui');
    const instance = Fastify();
    await instance.register(swagger, { mode: 'static', specification: { document: document() as never } });
    await instance.register(swaggerUi, { routePrefix: '/~help/api' });
    await instance.ready();
    return instance;
  };
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    docs ??= build();
    const res = await (await docs).inject({ method: 'GET', url: request.url, headers: request.headers });
    reply.code(res.statusCode);
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    }
    return reply.send(res.rawPayload);
  };
  app.get('/~help/api', { schema: { hide: true } }, handler);
  app.get('/~help/api/*', { schema: { hide: true } }, handler);
}

/**
 * Builds the HTTP application (not listening): plugins in load order batched writes → errors →
 * input → bodies → ops (health, metrics), then, in one scope behind the auth plugin, the REST
 * API under `/~api`, OpenAPI 3.1 at `/~api/openapi.json` and its rendering at `/~help/api`, the
 * git smart-HTTP routes at `/<project path>` and the web UI of src/web (docs/architecture.md#layers).
 * `options.logger`: false for no logs, else pino at `config.logLevel`, written to
 * `options.logDestination` (default stdout), a line per request as {@link RequestLog} decides,
 * credentials redacted from logged URLs. Every completed request is counted in
 * `options.metrics` (see {@link requestMetrics}), logs or not. `options.gitAccess` authorizes
 * git over HTTP and answers the push hooks (shared with git over SSH).
 * A request (headers and body) must arrive within `config.requestTimeoutMs` (408 otherwise).
 */
export async function buildApp(
  services: Services,
  options: { logger?: boolean; logDestination?: LogDestination; metrics: Metrics; gitAccess: GitAccess },
): Promise<App> {
  const { config } = services;
  const app = Fastify({
    // silenced, the logger still exists: Fastify reports completed requests (to the metrics) only with one
    logger: options.logger ? loggerOptions(config.logLevel, options.logDestination) : { level: 'silent' },
    childLoggerFactory: lazyChildLogger,
    logController: new RequestLog(requestMetrics(options.metrics)),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    serverFactory: (handler) => httpServer(config.requestTimeoutMs, handler),
    clientErrorHandler,
    frameworkErrors,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    schemaController: { compilersFactory: { buildValidator: (() => validatorCompiler()) as never, buildSerializer: serializerCompiler as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  await app.register(batchedWritesPlugin);
  await app.register(errorsPlugin);
  await app.register(inputPlugin);
  await app.register(bodiesPlugin);
  await app.register(opsPlugin, { services, metrics: options.metrics });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Gitloom API', version: '1', description: 'OneDev 8.6 compatible REST API' },
      servers: [{ url: services.config.serverUrl }],
      components: {
        securitySchemes: { basic: { type: 'http', scheme: 'basic' }, bearer: { type: 'http', scheme: 'bearer' } },
        schemas: { Problem: problemSchema() },
      },
      security: [{ basic: [] }, { bearer: [] }],
    },
  });

  // every route but the operations endpoints (which check credentials of their own) runs as the
  // caller its credentials name; API writes from another site are refused first (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input)
  // build agents authenticate with their own tokens (docs/compatibility.md#build-agents)
  await app.register(agentProtocolRoutes, { services });
  await app.register(async (authenticated) => {
    // before authentication: credentials a browser attaches to a forged request are never checked
    authenticated.addHook('onRequest', refuseCrossSiteWrites(config));
    await authenticated.register(authPlugin, { services });
    // a path no route takes is answered here too: credentials sent with it are checked first
    authenticated.setNotFoundHandler(noRoute);
    await authenticated.register(
      async (api) => {
        await api.register(queryParamsPlugin);
        api.addHook('onRequest', requireApiAccess);
        await api.register(apiRoutes, { services });
      },
      { prefix: '/~api' },
    );
    authenticated.get('/~api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    apiDocsRoutes(authenticated, () => app.swagger());
    await authenticated.register(gitHttpRoutes, { services, gitAccess: options.gitAccess });
    await authenticated.register(webPlugin, { services });
  });
  return app;
}
