/**
 * The agent's side of the HTTP(S) calls of the agent protocol (docs/compatibility.md#build-agents
 * "The agent protocol"): each call carries a Bearer credential (the agent token, or a job's
 * token), and its outcome is one of three: an answer (2xx), a refusal (4xx, problem+json with its
 * stable `code`: {@link ServerRefusal}), or no answer — the server unreachable, or answering 5xx
 * while it is unavailable ({@link ServerUnreachable}), which the caller retries with
 * {@link Backoff}.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The server refused a call (4xx): its status, the problem's `code` and `detail`. */
export class ServerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    readonly detail: string,
  ) {
    super(`Server refused (${status}${code ? ` ${code}` : ''}): ${detail}`);
  }
}

/** The server could not be reached, or answered 5xx: worth trying again. */
export class ServerUnreachable extends Error {}

/** What a call sends. */
export interface CallOptions {
  readonly method?: 'GET' | 'POST';
  /** The Bearer credential. */
  readonly token: string;
  /** A JSON body (sent as `application/json`), text (`text/plain`), or a byte stream (`application/octet-stream`). */
  readonly json?: unknown;
  readonly text?: string;
  readonly stream?: AsyncIterable<Uint8Array>;
  /** Milliseconds before the call is given up as unreachable (default 30 000). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Calls `path` (below `server`, the server's URL) and resolves with the answer of a 2xx status
 * (its body not read yet).
 *
 * @throws ServerRefusal for a 4xx, ServerUnreachable for no answer, a 5xx or the time-out;
 *   the abort reason when `signal` is aborted.
 */
export async function callServer(server: string, path: string, options: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json, */*' };
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.text !== undefined) {
    headers['content-type'] = 'text/plain; charset=utf-8';
    body = options.text;
  } else if (options.stream !== undefined) {
    headers['content-type'] = 'application/octet-stream';
    body = options.stream as unknown as BodyInit;
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(new URL(path.replace(/^\/+/, ''), withSlash(server)), {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      signal,
      ...(options.stream !== undefined && { duplex: 'half' }),
    } as RequestInit);
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new ServerUnreachable(`Server ${server} unreachable: ${describeFetchError(error)}`);
  }
  if (response.ok) return response;
  const text = await response.text().catch((e: Error) => `(body unreadable: ${e.message})`);
  if (response.status >= 500) throw new ServerUnreachable(`Server ${server} answered ${response.status}: ${problemDetail(text)}`);
  throw new ServerRefusal(response.status, problemCode(text), problemDetail(text));
}

/** {@link callServer} with a JSON answer (null for 204). */
export async function callServerJson<T>(server: string, path: string, options: CallOptions): Promise<T | null> {
  const response = await callServer(server, path, options);
  if (response.status === 204) return null;
  return (await response.json()) as T;
}

/** The base URL with a trailing `/`, so that paths resolve below it (a server under `/gitloom/`). */
function withSlash(server: string): string {
  return server.endsWith('/') ? server : `${server}/`;
}

function parseProblem(text: string): { code?: unknown; detail?: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null; // not problem+json (a proxy's page): the text itself is the detail
  }
}

function problemCode(text: string): string | null {
  const code = parseProblem(text)?.code;
  return typeof code === 'string' ? code : null;
}

function problemDetail(text: string): string {
  const detail = parseProblem(text)?.detail;
  return typeof detail === 'string' ? detail : text.slice(0, 200);
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

/**
 * Delays between tries: `initialMs` doubling up to `maxMs` (default 100 ms to 5 s), back to
 * `initialMs` after {@link Backoff.reset}.
 */
export class Backoff {
  private next: number;

  constructor(
    private readonly initialMs = 100,
    private readonly maxMs = 5000,
  ) {
    this.next = initialMs;
  }

  /** Waits the current delay (ends early, rejecting, when `signal` is aborted) and doubles it. */
  async wait(signal?: AbortSignal): Promise<void> {
    const delay = this.next;
    this.next = Math.min(this.maxMs, this.next * 2);
    await sleep(delay, undefined, { signal });
  }

  reset(): void {
    this.next = this.initialMs;
  }
}
