/**
 * The one error hierarchy of Gitloom. Every layer throws these; the HTTP error mapper
 * (src/plugins/errors.ts) turns them into RFC 9457 problem details with their `status`.
 * Anything else that escapes a request is a bug and answers 500 (docs/compatibility.md#gitloom-differs-errors).
 *
 * Specific errors subclass one of these (e.g. `RefUpdateConflict extends Conflict`), so callers
 * can catch by class and the mapper still knows the status.
 *
 * Every error carries a stable `code` of the registry (src/error-codes.ts), returned beside
 * `title` and `detail` in problem+json so clients branch without matching English: by default
 * the generic code of its status (`GITLOOM_ERR_NOT_FOUND`); a subclass or a throw site names a
 * more specific one (`GITLOOM_ERR_QUERY_SYNTAX`, `GITLOOM_ERR_REF_MOVED`).
 */
import { errorCode, type ErrorCode } from './error-codes.js';

export abstract class GitloomError extends Error {
  /** HTTP status the error maps to. */
  abstract readonly status: number;
  /** Short, fixed title (the HTTP reason phrase). */
  abstract readonly title: string;
  /** The code given at the throw site, if any (see {@link GitloomError.code}). */
  readonly #code: ErrorCode | undefined;

  /**
   * @param detail the problem detail (human text, may change between versions).
   * @param options `cause`, and `code`: a specific stable code (`GITLOOM_ERR_…`).
   */
  constructor(detail: string, options?: ErrorOptions & { code?: ErrorCode }) {
    super(detail, options);
    this.name = new.target.name;
    this.#code = options?.code;
  }

  /** The stable machine-readable code: the throw site's, else one derived from the title. */
  get code(): ErrorCode {
    return this.#code ?? errorCode(this.title);
  }
}

/** 400: malformed or invalid input (validation, query syntax, bad reference in a body). */
export class BadRequest extends GitloomError {
  readonly status = 400;
  readonly title = 'Bad Request';
}

/** 401: credentials missing or invalid where a user is required. */
export class Unauthorized extends GitloomError {
  readonly status = 401;
  readonly title = 'Unauthorized';
  constructor(detail = 'Not authenticated', options?: ErrorOptions & { code?: ErrorCode }) {
    super(detail, options);
  }
}

/** 403: the caller is known but lacks the privilege. */
export class Forbidden extends GitloomError {
  readonly status = 403;
  readonly title = 'Forbidden';
  constructor(detail = 'Permission denied', options?: ErrorOptions & { code?: ErrorCode }) {
    super(detail, options);
  }
}

/** 404: no such entity, or the caller may not see it (existence is not leaked). */
export class NotFound extends GitloomError {
  readonly status = 404;
  readonly title = 'Not Found';
}

/** 409: state or uniqueness conflict ("already merged", duplicate name, lost ref race, …). */
export class Conflict extends GitloomError {
  readonly status = 409;
  readonly title = 'Conflict';
}

/** 413: request body over the configured limit. */
export class PayloadTooLarge extends GitloomError {
  readonly status = 413;
  readonly title = 'Payload Too Large';
}

/** 416: the requested byte range does not overlap the file. `size` feeds `Content-Range: bytes *\/size`. */
export class RangeNotSatisfiable extends GitloomError {
  readonly status = 416;
  readonly title = 'Range Not Satisfiable';
  constructor(readonly size: number) {
    super(`Requested range not satisfiable (size ${size})`);
  }
}

/**
 * 422: the input is well-formed but names something invalid — a Git LFS object id that is no
 * SHA-256, an upload whose bytes do not hash to its id or have another size
 * (docs/compatibility.md#git-lfs).
 */
export class UnprocessableEntity extends GitloomError {
  readonly status = 422;
  readonly title = 'Unprocessable Entity';
}

/** An error that says when to try again: `retryAfter` whole seconds, sent as `Retry-After`. */
export abstract class RetryLater extends GitloomError {
  constructor(
    detail: string,
    readonly retryAfter: number,
    options?: ErrorOptions & { code?: ErrorCode },
  ) {
    super(detail, options);
  }
}

/**
 * 429: too many failed sign-ins for an (account, client address) pair or from a client address,
 * or too many delayed sign-ins waiting on an account (docs/compatibility.md#gitloom-differs-errors, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 * `retryAfter` is whole seconds until the limit lifts.
 */
export class TooManyRequests extends RetryLater {
  readonly status = 429;
  readonly title = 'Too Many Requests';
}

/**
 * 503: a service the request needs is unavailable for a while — the database during an outage
 * (src/db/availability.ts). Code `GITLOOM_ERR_UNAVAILABLE`; `retryAfter` is whole seconds after
 * which a retry may succeed.
 */
export class Unavailable extends RetryLater {
  readonly status = 503;
  readonly title = 'Service Unavailable';
  constructor(detail: string, retryAfter: number, options?: ErrorOptions & { code?: ErrorCode }) {
    super(detail, retryAfter, { ...options, code: options?.code ?? 'GITLOOM_ERR_UNAVAILABLE' });
  }
}
