import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../services.js';
import { authPlugin, requireApiAccess } from './plugins/auth.js';
import { bodiesPlugin } from './plugins/bodies.js';
import { errorsPlugin } from './plugins/errors.js';
import { queryParamsPlugin } from './plugins/query-params.js';
import { apiRoutes } from './routes/index.js';
import { gitHttpRoutes } from './routes/git-http-wiring.js';

export type App = FastifyInstance;

/** Ajv instances: query strings and path params are coerced from text, bodies never are. */
function validatorCompiler() {
  const strict = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: false, strict: false });
  const coercing = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: 'array', strict: false });
  const addFormats = formatsPlugin as unknown as (ajv: Ajv) => void;
  addFormats(strict);
  addFormats(coercing);
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema);
}

/**
 * Builds the HTTP application (not listening): plugins in load order errors → bodies → auth,
 * the git smart-HTTP routes at `/<project path>`, the REST API under `/~api`, OpenAPI 3.1 at
 * `/~api/openapi.json` and its rendering at `/~help/api` (ARCHITECTURE.md "Layers").
 */
export async function buildApp(services: Services, options: { logger?: boolean | object } = {}): Promise<App> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: services.config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());

  await app.register(errorsPlugin);
  await app.register(bodiesPlugin);
  await app.register(authPlugin, { services });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Gitloom API', version: '1', description: 'OneDev 8.6 compatible REST API' },
      servers: [{ url: services.config.serverUrl }],
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' }, bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ basic: [] }, { bearer: [] }],
    },
  });

  await app.register(async (api) => {
    await api.register(queryParamsPlugin);
    api.addHook('onRequest', requireApiAccess);
    await api.register(apiRoutes, { services });
  }, { prefix: '/~api' });

  app.get('/~api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/~help/api' });
  await app.register(gitHttpRoutes, { services });
  return app;
}
