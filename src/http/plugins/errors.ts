import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { GitloomError } from '../../errors.js';

/** Sends an RFC 9457 problem details body (CONTRACT.md §4). */
export function sendProblem(reply: FastifyReply, status: number, title: string, detail: string): FastifyReply {
  if (status === 401) reply.header('WWW-Authenticate', 'Basic realm="Gitloom"');
  return reply
    .code(status)
    .type('application/problem+json')
    .serializer(JSON.stringify)
    .send({ type: 'about:blank', title, status, detail });
}

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type',
};

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns the first schema violation into a sentence naming the field. */
function validationDetail(errors: AjvError[], context: string | undefined): string {
  const error = errors[0];
  const part = context ?? 'body';
  const where = `${part}${error.instancePath.replace(/\//g, '.')}`;
  if (error.keyword === 'additionalProperties') {
    return part === 'querystring'
      ? `Unexpected query params: [${String(error.params.additionalProperty)}]`
      : `Unrecognized field "${String(error.params.additionalProperty)}" in ${where}`;
  }
  if (error.keyword === 'required') return `Missing field "${String(error.params.missingProperty)}" in ${where}`;
  return `${where} ${error.message ?? 'is invalid'}`;
}

/**
 * The error mapper: GitloomErrors keep their status and message; schema violations, bad JSON,
 * unsupported media types and oversized bodies become 4xx; everything else is logged and
 * answered with a fixed 500 text (a bug to fix, never caused by input by design).
 */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof GitloomError) return sendProblem(reply, error.status, error.title, error.message);
    if (error.validation) {
      // a path id that is not even a number names nothing (reference/platform.md §8 #7)
      if (error.validationContext === 'params') {
        return sendProblem(reply, 404, 'Not Found', validationDetail(error.validation as AjvError[], error.validationContext));
      }
      return sendProblem(reply, 400, 'Bad Request', validationDetail(error.validation as AjvError[], error.validationContext));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const detail = error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError
        ? `Malformed JSON: ${error.message}`
        : error.message;
      return sendProblem(reply, status, TITLES[status] ?? 'Bad Request', detail);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendProblem(reply, 500, 'Internal Server Error', 'Internal server error');
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 404, 'Not Found', `No route for ${request.method} ${request.url.split('?')[0]}`),
  );
}, { name: 'errors' });
