/**
 * The one error hierarchy of Gitloom. Every layer throws these; the HTTP error mapper
 * (src/http/plugins/errors.ts) turns them into RFC 9457 problem details with their `status`.
 * Anything else that escapes a request is a bug and answers 500 (CONTRACT.md §4).
 *
 * Specific errors subclass one of these (e.g. `MergeConflict extends Conflict`), so callers
 * can catch by class and the mapper still knows the status.
 */
export abstract class GitloomError extends Error {
  /** HTTP status the error maps to. */
  abstract readonly status: number;
  /** Short, fixed title (the HTTP reason phrase). */
  abstract readonly title: string;

  constructor(detail: string, options?: ErrorOptions) {
    super(detail, options);
    this.name = new.target.name;
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
  constructor(detail = 'Not authenticated', options?: ErrorOptions) {
    super(detail, options);
  }
}

/** 403: the caller is known but lacks the privilege. */
export class Forbidden extends GitloomError {
  readonly status = 403;
  readonly title = 'Forbidden';
  constructor(detail = 'Permission denied', options?: ErrorOptions) {
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
