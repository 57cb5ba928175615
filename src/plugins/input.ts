import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequest } from '../errors.js';

/** A NUL byte in a URL, raw or percent-encoded. */
const NUL_IN_URL = /%00|\0/i;

/**
 * Guards every request (API and git alike) before authentication: a URL carrying a NUL byte
 * — path or query, e.g. `GET /%00/info/refs?service=git-upload-pack` — is 400. No name, path,
 * ref or query text of Gitloom may hold one (git refuses them, PostgreSQL text cannot store them).
 */
export const inputPlugin = fp(
  async (app: FastifyInstance) => {
    // a callback hook: no promise and no extra tick for the common case
    app.addHook('onRequest', (request, _reply, done) => {
      done(NUL_IN_URL.test(request.url) ? new BadRequest('The URL contains a NUL byte', { code: 'GITLOOM_ERR_NUL_BYTE' }) : undefined);
    });
  },
  { name: 'input', dependencies: ['errors'] },
);
