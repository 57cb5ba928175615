import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ERROR_CODES, errorCode, type ErrorCode } from '../error-codes.js';
import { GitloomError, RetryLater } from '../errors.js';
import { offerBasicChallenge } from './cross-site.js';

/** An RFC 9457 problem details body with Gitloom's stable `code` (docs/compatibility.md#gitloom-differs-errors). */
export interface Problem {
  type: 'about:blank';
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
}

/**
 * The JSON schema of a problem details body (RFC 9457) for the OpenAPI document: `code` is one of
 * the registry's codes (src/error-codes.ts), each described with its status.
 */
export function problemSchema(): Record<string, unknown> {
  const codes = Object.entries(ERROR_CODES);
  return {
    type: 'object',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string', const: 'about:blank' },
      title: { type: 'string', description: 'The HTTP reason phrase of the status.' },
      status: { type: 'integer' },
      detail: { type: 'string', description: 'What went wrong, for people (the wording may change between versions).' },
      code: {
        type: 'string',
        enum: codes.map(([code]) => code),
        description: `The stable code to branch on:\n\n${codes.map(([code, { status, description }]) => `- \`${code}\` (${status}): ${description}`).join('\n')}`,
      },
    },
  };
}

/** The problem of a status; `code` defaults to the one derived from the title. */
export function problem(status: number, detail: string, code?: ErrorCode): Problem {
  const title = TITLES[status] ?? http.STATUS_CODES[status] ?? 'Error';
  return { type: 'about:blank', title, status, detail, code: code ?? errorCode(title) };
}

/**
 * Sends an RFC 9457 problem details body (docs/compatibility.md#gitloom-differs-errors) with its stable `code`; a 401 offers
 * Basic authentication to clients that are not browsers (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input, see
 * {@link offerBasicChallenge}).
 */
export function sendProblem(reply: FastifyReply, status: number, title: string, detail: string, code: ErrorCode = errorCode(title)): FastifyReply {
  if (status === 401) offerBasicChallenge(reply.request, reply);
  return reply
    .code(status)
    .type('application/problem+json')
    .serializer(JSON.stringify)
    .send({ type: 'about:blank', title, status, detail, code } satisfies Problem);
}

/** Sets `Retry-After` (whole seconds) for the errors that say when to retry: 429 and 503 (the database unavailable). */
export function sendRetryAfter(reply: FastifyReply, error: GitloomError): void {
  if (error instanceof RetryLater) reply.header('Retry-After', String(error.retryAfter));
}

/** The title (HTTP reason phrase) of each status the server answers with a problem body. */
export const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
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
 * The answer to a request Node's HTTP parser refused before Fastify saw it (Fastify's
 * `clientErrorHandler`): header fields or request line too large → 431, a request (headers and
 * body) not received within the request timeout → 408, anything else malformed → 400; all
 * problem+json, then the connection closes.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const detail =
    status === 431
      ? 'Request header fields (or the request line) too large'
      : status === 408
        ? 'The request was not received in time'
        : 'Malformed HTTP request';
  this.log.debug({ err: error }, 'client error');
  // a response already under way cannot be replaced: only close the connection
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || current?.headersSent) {
    socket.destroy(error);
    return;
  }
  const body = JSON.stringify(problem(status, detail));
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/**
 * Fastify's `frameworkErrors`: errors raised while routing, before any hook runs — a path
 * parameter longer than the router allows (414) or a URL that does not decode (400) — answered
 * as problem+json like every other error.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendProblem(reply, 414, TITLES[414], 'A path segment is too long');
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  return sendProblem(reply, status, TITLES[status] ?? 'Bad Request', error.code === 'FST_ERR_BAD_URL' ? 'Malformed URL' : error.message);
}

/**
 * The error mapper: GitloomErrors keep their status, message and code (a 429 and a 503 — the
 * database unavailable, src/db/availability.ts — also send `Retry-After`); schema violations, bad JSON, unsupported media types and oversized bodies
 * become 4xx; everything else is logged and answered with a fixed 500 text (a bug to fix,
 * never caused by input by design). Always problem+json (RFC 9457).
 */
export function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof GitloomError) {
    sendRetryAfter(reply, error);
    return sendProblem(reply, error.status, error.title, error.message, error.code);
  }
  if (error.validation) {
    const detail = validationDetail(error.validation as AjvError[], error.validationContext);
    // a path id that is not even a number names nothing (docs/compatibility.md#platform-errors)
    if (error.validationContext === 'params') return sendProblem(reply, 404, 'Not Found', detail);
    return sendProblem(reply, 400, 'Bad Request', detail, 'GITLOOM_ERR_VALIDATION');
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const malformed = error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError;
    const detail = malformed ? `Malformed JSON: ${error.message}` : error.message;
    return sendProblem(reply, status, TITLES[status] ?? 'Bad Request', detail, malformed ? 'GITLOOM_ERR_MALFORMED_JSON' : undefined);
  }
  request.log.error({ err: error }, 'unexpected error');
  return sendProblem(reply, 500, 'Internal Server Error', 'Internal server error', 'GITLOOM_ERR_INTERNAL');
}

/** The plugin setting {@link sendError} as the error handler of the whole application. */
export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler(sendError);
  },
  { name: 'errors' },
);

/**
 * The answer to a path no route takes: 404 problem+json `GITLOOM_ERR_NO_ROUTE`. Set as the
 * not-found handler of the scope behind authentication (see buildApp), so credentials sent with
 * such a request are still checked first: wrong ones are 401 wherever they are sent.
 */
export function noRoute(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(reply, 404, 'Not Found', `No route for ${request.method} ${request.url.split('?')[0]}`, 'GITLOOM_ERR_NO_ROUTE');
}
