import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
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

/**
 * Schema compilers that compile on first use: compiling the validators and serializers of every
 * route at start was most of the start time (and memory), while a process serves a few routes.
 * Ajv instances: query strings and path params are coerced from text, bodies never are.
 */
function validatorCompiler() {
  let instances: { strict: Ajv; coercing: Ajv } | undefined;
  const ajvs = () => {
    if (!instances) {
      const strict = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: false, strict: false });
      const coercing = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: 'array', strict: false });
      const addFormats = formatsPlugin as unknown as (ajv: Ajv) => void;
      addFormats(strict);
      addFormats(coercing);
      instances = { strict, coercing };
    }
    return instances;
  };
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    let compiled: ValidateFunction | undefined;
    const validate = (data: unknown): boolean => {
      compiled ??= (httpPart === 'body' ? ajvs().strict : ajvs().coercing).compile(schema);
      const valid = compiled(data) as boolean;
      validate.errors = compiled.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  };
}

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
 * Builds the HTTP application (not listening): plugins in load order errors → bodies → auth,
 * the git smart-HTTP routes at `/<project path>`, the REST API under `/~api`, OpenAPI 3.1 at
 * `/~api/openapi.json` and its rendering at `/~help/api` (ARCHITECTURE.md "Layers").
 */
export async function buildApp(services: Services, options: { logger?: boolean | object } = {}): Promise<App> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: services.config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    schemaController: { compilersFactory: { buildValidator: (() => validatorCompiler()) as never, buildSerializer: serializerCompiler as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

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
