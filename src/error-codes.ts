/**
 * The registry of the stable error codes: every problem+json body Gitloom sends carries one as
 * `code` beside `title` and `detail` (docs/compatibility.md#gitloom-differs-errors), so clients
 * branch on it rather than on English text, which may change. One list, in the habit of
 * Fastify's `FST_ERR_*` codes: a code is only ever thrown from here (the type {@link ErrorCode}
 * admits no other), the OpenAPI document lists them as the `Problem` schema's `code` values, and a
 * test keeps the table of docs/compatibility.md#gitloom-differs-error-codes in step.
 *
 * The generic code of a status is `GITLOOM_ERR_` + its title in upper snake case
 * (`GITLOOM_ERR_NOT_FOUND`); a refusal a client may want to handle on its own has a specific one.
 */
export const ERROR_CODES = {
  // the generic code of each status Gitloom answers
  GITLOOM_ERR_BAD_REQUEST: { status: 400, description: 'The input is malformed or invalid.' },
  GITLOOM_ERR_UNAUTHORIZED: { status: 401, description: 'Credentials are missing or wrong where a user is required.' },
  GITLOOM_ERR_FORBIDDEN: { status: 403, description: 'The caller lacks the privilege.' },
  GITLOOM_ERR_NOT_FOUND: { status: 404, description: 'No such entity, or the caller may not see it (existence is not leaked).' },
  GITLOOM_ERR_METHOD_NOT_ALLOWED: { status: 405, description: 'The path does not take this method.' },
  GITLOOM_ERR_NOT_ACCEPTABLE: { status: 406, description: 'No representation matches the Accept header.' },
  GITLOOM_ERR_REQUEST_TIMEOUT: { status: 408, description: 'The request took longer than the server waits for one.' },
  GITLOOM_ERR_CONFLICT: { status: 409, description: 'The state of the entity refuses the change (already closed, duplicate name, …).' },
  GITLOOM_ERR_PAYLOAD_TOO_LARGE: { status: 413, description: 'The body is over the configured limit.' },
  GITLOOM_ERR_URI_TOO_LONG: { status: 414, description: 'The request line or a path segment is too long.' },
  GITLOOM_ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'The body has a content type the operation does not take.' },
  GITLOOM_ERR_RANGE_NOT_SATISFIABLE: { status: 416, description: 'The requested byte range does not overlap the file.' },
  GITLOOM_ERR_UNPROCESSABLE_ENTITY: {
    status: 422,
    description: 'The input is well-formed but invalid (a Git LFS object whose bytes do not match its id or size).',
  },
  GITLOOM_ERR_TOO_MANY_REQUESTS: { status: 429, description: 'Too many requests; retry after `Retry-After` seconds.' },
  GITLOOM_ERR_REQUEST_HEADER_FIELDS_TOO_LARGE: { status: 431, description: 'The header fields are too large.' },
  GITLOOM_ERR_INTERNAL: { status: 500, description: 'A fault of the server (logged); never caused by input by design.' },
  GITLOOM_ERR_SERVICE_UNAVAILABLE: { status: 503, description: 'A service the request needs is away for a while.' },

  // input
  GITLOOM_ERR_VALIDATION: { status: 400, description: "The body or query parameters do not match the operation's schema; `detail` names the field." },
  GITLOOM_ERR_MALFORMED_JSON: { status: 400, description: 'The body is not JSON.' },
  GITLOOM_ERR_JSON_TOO_DEEP: { status: 400, description: 'The JSON body is nested too deeply.' },
  GITLOOM_ERR_NUL_BYTE: { status: 400, description: 'The URL or the body holds a NUL byte.' },
  GITLOOM_ERR_QUERY_SYNTAX: { status: 400, description: 'A query does not parse; `detail` says where.' },
  GITLOOM_ERR_PATTERN: { status: 400, description: 'A pattern or the text it is matched against is over its limits, or not a valid pattern.' },
  GITLOOM_ERR_NO_ROUTE: { status: 404, description: 'No route takes this path.' },
  GITLOOM_ERR_ARTIFACT_TOO_LARGE: { status: 413, description: 'An artifact file is over `GITLOOM_ARTIFACT_MAX_MB`.' },
  GITLOOM_ERR_JOB_CACHE_TOO_LARGE: {
    status: 413,
    description: "A job cache's archive sent by an agent is over the server's `GITLOOM_JOB_CACHE_MB`: it is not kept.",
  },

  GITLOOM_ERR_SSH_KEY_INVALID: { status: 400, description: 'An SSH key is not one OpenSSH public key line of a supported type (`<type> <base64> [comment]`).' },
  GITLOOM_ERR_SSH_KEY_IN_USE: { status: 400, description: 'An SSH key is already registered, by this user or another: a key names one user.' },

  // callers and their limits
  GITLOOM_ERR_CROSS_SITE: { status: 403, description: 'A write sent by a browser from another site.' },
  GITLOOM_ERR_SIGN_IN_LIMIT: {
    status: 429,
    description: 'Too many failed sign-ins for this account from this address, or from this address; retry after `Retry-After` seconds.',
  },
  GITLOOM_ERR_TOKEN_READ_ONLY: { status: 403, description: 'A read-only access token was used for a change (it may read, fetch and download only).' },
  GITLOOM_ERR_TOKEN_LIFETIME: { status: 400, description: "An access token's expiry is past the security setting's `maxTokenLifetimeDays`." },
  GITLOOM_ERR_TWO_FACTOR_REQUIRED: {
    status: 401,
    description: 'A password was sent for Basic auth by a user with two-factor authentication: use an access token instead.',
  },
  GITLOOM_ERR_TWO_FACTOR_CODE: { status: 401, description: 'The second step of a sign-in was answered with a wrong or already used code or key.' },
  GITLOOM_ERR_TWO_FACTOR_EXPIRED: { status: 401, description: 'The second step of a sign-in waited too long, or was ended: sign in again.' },
  GITLOOM_ERR_UNAVAILABLE: { status: 503, description: 'The database is unavailable; retry after `Retry-After` seconds.' },

  // git
  GITLOOM_ERR_REF_MOVED: { status: 409, description: 'A ref moved since it was read (a concurrent push or merge); read it again.' },
  GITLOOM_ERR_GIT_BUSY: {
    status: 503,
    description: 'Too many clones and fetches are waiting for one of the `GITLOOM_GIT_CONCURRENCY` slots; retry after `Retry-After` seconds.',
  },
  GITLOOM_ERR_NOT_OUR_REF: { status: 400, description: 'A fetch asked for an object no ref reaches.' },

  // merge refusals, in the order the merge checks them (docs/compatibility.md#pull-requests-merge-checks)
  GITLOOM_ERR_MERGE_CLOSED: { status: 409, description: 'The pull request is already merged or discarded.' },
  GITLOOM_ERR_MERGE_IN_ERROR: { status: 409, description: "The pull request's last check failed; `detail` says why." },
  GITLOOM_ERR_MERGE_TARGET_GONE: { status: 409, description: 'The target branch no longer exists.' },
  GITLOOM_ERR_MERGE_CONFLICTS: { status: 409, description: 'The source does not merge into the target without conflicts.' },
  GITLOOM_ERR_MERGE_REVIEW_REQUIRED: { status: 409, description: 'Required reviewers have not all approved.' },
  GITLOOM_ERR_MERGE_BUILD_REQUIRED: { status: 409, description: 'A build the target branch requires has not succeeded.' },
  GITLOOM_ERR_MERGE_SIGNATURE_REQUIRED: { status: 409, description: 'The target branch requires signed commits.' },
  GITLOOM_ERR_MERGE_COMMIT_MESSAGE: { status: 409, description: "A commit message breaks the target branch's rules; `detail` names the commit." },

  // job executors (docs/compatibility.md#builds-job-executors)
  GITLOOM_ERR_JOB_EXECUTOR_TYPE: {
    status: 400,
    description: "A job executor's `@type` is missing, unknown, or an executor type Gitloom does not have yet (Kubernetes).",
  },
  GITLOOM_ERR_JOB_EXECUTOR_NAME: { status: 400, description: "A job executor's name is missing, not a DNS-style name, or used by another executor." },
  GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT: {
    status: 400,
    description: "A job executor's `jobRequirement` does not parse in the job match language or names an unknown user or group.",
  },
  GITLOOM_ERR_JOB_EXECUTOR_AGENT_QUERY: {
    status: 400,
    description:
      "A remote executor's `agentQuery` does not parse as an agent query, or uses a criterion an executor cannot (`online`, `paused`, `order by`, …).",
  },
  GITLOOM_ERR_JOB_EXECUTOR_UNSUPPORTED: {
    status: 400,
    description: 'A job executor setting Gitloom does not act on (`mountDockerSock`, `runOptions`, …) is set away from its default; `detail` says why.',
  },
  GITLOOM_ERR_JOB_EXECUTOR_VALUE: {
    status: 400,
    description: "A job executor's concurrency, CPU or memory limit, cache TTL, socket path or registry login does not read; `detail` names the field.",
  },

  // the agent protocol (docs/compatibility.md#build-agents)
  GITLOOM_ERR_AGENT_CONNECTED: {
    status: 409,
    description: 'An agent connected with a token whose agent is online under another connection; it tries again once that connection timed out.',
  },
  GITLOOM_ERR_AGENT_SESSION: {
    status: 409,
    description: "An agent's connection is no longer valid (its token deleted, the agent removed, or replaced): it connects again.",
  },
  GITLOOM_ERR_JOB_ENDED: {
    status: 409,
    description: 'A job token was used after its build stopped running on that agent (finished, cancelled, or its lease expired): the agent stops the job.',
  },

  // build agents (docs/compatibility.md#build-agents)
  GITLOOM_ERR_AGENT_OFFLINE: { status: 400, description: "An agent's attributes can be changed only while it is online." },
  GITLOOM_ERR_AGENT_ATTRIBUTE: {
    status: 400,
    description:
      "An agent attribute's name does not start and end with a letter, digit or underscore (dashes, dots and spaces between), or is one of the agent's own fields.",
  },

  // repository mirrors (docs/compatibility.md#repository-mirrors)
  GITLOOM_ERR_MIRROR_URL: {
    status: 400,
    description:
      'A mirror URL is not an http(s) URL, carries credentials (they go in `userName` and `password`), or names an address the outbound rules refuse.',
  },
  GITLOOM_ERR_MIRROR_VALUE: {
    status: 400,
    description: "A mirror's direction, credentials, interval or another field does not read; `detail` names the field.",
  },
  GITLOOM_ERR_MIRROR_CONFLICT: {
    status: 409,
    description: 'The project already has a pull mirror, its repository is not empty (a pull mirror needs an empty one), or the mirror is disabled.',
  },
  GITLOOM_ERR_PULL_MIRRORED: {
    status: 409,
    description: 'The project is a pull mirror: its branches and tags follow the remote, so pushes, merges and ref edits are refused.',
  },
  // single sign-on (docs/security.md#single-sign-on)
  GITLOOM_ERR_DIRECTORY_UNAVAILABLE: {
    status: 503,
    description: 'The directory server (LDAP) of the authenticator does not answer or refuses the server; local accounts still sign in.',
  },
  GITLOOM_ERR_EXTERNAL_ACCOUNT: {
    status: 409,
    description: 'The user signs in through the directory or an SSO provider: its password is changed there, not here.',
  },
  GITLOOM_ERR_AUTHENTICATOR_VALUE: { status: 400, description: 'A field of the authenticator or of an SSO connector does not read; `detail` names it.' },
  GITLOOM_ERR_SSO_PROVIDER_UNAVAILABLE: { status: 503, description: 'The OpenID provider of an SSO connector does not answer its discovery.' },
  GITLOOM_ERR_SSO_REFUSED: {
    status: 401,
    description: 'An external sign-in was refused: an unsolicited or tampered response, a name or email taken by another user, or no account to link.',
  },
} as const satisfies Record<`GITLOOM_ERR_${string}`, { status: number; description: string }>;

/** A registered error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The generic code of a status's title: `Payload Too Large` → `GITLOOM_ERR_PAYLOAD_TOO_LARGE`;
 * `GITLOOM_ERR_INTERNAL` for 500 and for a title with no registered code.
 */
export function errorCode(title: string): ErrorCode {
  const code = `GITLOOM_ERR_${title.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;
  return code in ERROR_CODES ? (code as ErrorCode) : 'GITLOOM_ERR_INTERNAL';
}
