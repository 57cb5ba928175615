import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';

/** Where pino writes: any stream with `write(line)` (stdout by default; tests pass their own). */
export interface LogDestination {
  write(chunk: string): unknown;
}

/** Query parameters whose values are credentials and never reach a log. */
const CREDENTIAL_PARAMS = /^(access[-_]?token|token|private[-_]?token|password|passwd|secret|api[-_]?key|key|signature|sig)$/i;

/** What replaces a credential in a logged URL. */
export const REDACTED = '[REDACTED]';

/**
 * A URL fit for a log: the values of credential query parameters (`access-token`, `token`,
 * `password`, `secret`, …) replaced by `[REDACTED]`, and user information (`user:pass@`) of an
 * absolute URL removed. Other parameters are left exactly as sent.
 *
 * @example redactUrl('/~api/trigger-job?access-token=abc&job=ci') === '/~api/trigger-job?access-token=[REDACTED]&job=ci'
 */
export function redactUrl(url: string): string {
  const withoutUserInfo = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@?#]*@/i, '$1');
  const mark = withoutUserInfo.indexOf('?');
  if (mark < 0) return withoutUserInfo;
  const query = withoutUserInfo
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const rawName = equals < 0 ? pair : pair.slice(0, equals);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the name as sent
      }
      return equals >= 0 && CREDENTIAL_PARAMS.test(name) ? `${rawName}=${REDACTED}` : pair;
    });
  return `${withoutUserInfo.slice(0, mark)}?${query.join('&')}`;
}

/**
 * Fastify's logger options: pino at `level`, written to `destination` when given, else to stdout —
 * human-readable through `pino-pretty` on a terminal, JSON lines otherwise; the request
 * serialized as Fastify does by default but with {@link redactUrl}. A logged request is only
 * ever what this serializer returns (method, URL, host, address — never a header), so no
 * credential header reaches a log and no per-line redaction pass is needed.
 */
export function loggerOptions(level: string, destination?: LogDestination): object {
  const pretty = !destination && process.stdout.isTTY;
  return {
    level,
    ...(destination && { stream: destination }),
    ...(pretty && { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } }),
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          version: request.headers?.['accept-version'],
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        };
      },
    },
  };
}

/** A successful read slower than this (ms) is still logged at info. */
export const SLOW_REQUEST_MS = 1000;

/**
 * Fastify's request log: every completed request is first passed to `record` (the metrics,
 * see ops.ts), then gets one line, written when its response is done (nothing when a request
 * arrives): `request errored` (error) when it failed with a fault; otherwise `request completed`
 * with the request as {@link loggerOptions} serializes it, the status (`res.statusCode`) and
 * `responseTime` in ms — at info for a change (any method but GET and HEAD), a refusal or failure
 * (status 400 and above) and a read slower than {@link SLOW_REQUEST_MS}, at debug for the other
 * successful reads (the bulk of the traffic, counted by route and status in the metrics; an info
 * line for each cost a quarter of a small request's time). Fastify's other log lines are unchanged.
 */
export class RequestLog extends LogController {
  constructor(private readonly record: (request: FastifyRequest, reply: FastifyReply) => void) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    this.record(request, reply);
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    const responseTime = reply.elapsedTime;
    const method = request.method;
    if ((method === 'GET' || method === 'HEAD') && reply.statusCode < 400 && responseTime < SLOW_REQUEST_MS) {
      reply.log.debug({ req: request, res: reply, responseTime }, 'request completed');
    } else {
      reply.log.info({ req: request, res: reply, responseTime }, 'request completed');
    }
  }
}

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
/** Fastify's logger: pino (see {@link loggerOptions}). */
type Logger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/** The level methods of a logger. */
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A request's logger, made on first use: Fastify gives every request a child of the server's
 * logger bound to its request id, which pino builds eagerly (bindings serialized, prototype
 * chain set up), yet most requests write no line at all (see {@link RequestLog}). A call at a
 * disabled level returns at once; the first enabled call makes the child.
 */
class LazyChildLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The child logger, made now if not yet. */
  get logger(): Logger {
    return (this.made ??= this.parent.child(this.bindings, this.options) as Logger);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  silent(): void {}
}
for (const level of LEVELS) {
  Object.defineProperty(LazyChildLogger.prototype, level, {
    value(this: LazyChildLogger, ...args: unknown[]) {
      if (this.isLevelEnabled(level)) (this.logger[level] as (...a: unknown[]) => void)(...args);
    },
  });
}

/**
 * Fastify's `childLoggerFactory`: the request logger as a {@link LazyChildLogger}, or pino's
 * child at once when the route sets a level of its own.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level) return logger.child(bindings, options);
  // Fastify's logger is pino (see loggerOptions)
  return new LazyChildLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
