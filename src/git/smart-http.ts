/**
 * Git smart HTTP, independent of any web framework and fully streamed (docs/architecture.md#git-smart-http). src/domain/repositories/git-protocol.ts serves an authorized
 * repository through {@link advertiseRefs} for `GET …/info/refs?service=…` and {@link serviceRpc} for
 * `POST …/git-upload-pack` and `POST …/git-receive-pack`.
 */
import { PassThrough, pipeline, Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { BadRequest, GitloomError } from '../errors.js';
import { GitError, spawnGit, value, type GitStream } from './command.js';
import { markPush, type PushMarker } from './push-markers.js';
import { reachableWantsGate, UnreachableWant } from './reachable-wants.js';
import { UPLOAD_PACK_NICENESS, UploadPackSlotGate } from './upload-pack-slots.js';

/** The two smart-HTTP services. */
export type GitService = 'git-upload-pack' | 'git-receive-pack';

/**
 * Checks a service name from a request.
 *
 * @returns the service.
 * @throws BadRequest `Unsupported service: X` for anything but the two git services.
 */
export function parseService(service: string | undefined | null): GitService {
  if (service === 'git-upload-pack' || service === 'git-receive-pack') return service;
  throw new BadRequest(`Unsupported service: ${service ?? ''}`);
}

/**
 * Keeps a client's `Git-Protocol` header (or, over SSH, its `GIT_PROTOCOL` variable) when it is
 * well-formed (`version=2`, `key=value:…`).
 *
 * @returns `{ GIT_PROTOCOL }` to add to git's environment, or nothing.
 */
export function protocolEnv(gitProtocol: string | undefined): Record<string, string> {
  if (!gitProtocol || !/^[A-Za-z0-9=:._-]{1,256}$/.test(gitProtocol)) return {};
  return { GIT_PROTOCOL: gitProtocol };
}

function wantsV2(service: GitService, gitProtocol: string | undefined): boolean {
  return service === 'git-upload-pack' && !!gitProtocol && gitProtocol.split(':').includes('version=2');
}

/**
 * Configuration given to upload-pack on its command line (`-c`), for every repository whatever
 * its own config says: partial clone (`--filter=blob:none`, `--filter=tree:0`) needs
 * `uploadpack.allowFilter`; a fetch by object id — a partial clone's lazy fetches, `git fetch
 * origin <sha>` — needs `uploadpack.allowReachableSHA1InWant`, which serves commits reachable
 * from a ref and never unreachable ones (a repository created before may still say
 * `allowAnySHA1InWant`: switched off first). Protocol v2 ignores these settings: its wants are
 * checked by src/git/reachable-wants.ts.
 */
const UPLOAD_PACK_CONFIG = [
  '-c',
  'uploadpack.allowFilter=true',
  '-c',
  'uploadpack.allowAnySHA1InWant=false',
  '-c',
  'uploadpack.allowReachableSHA1InWant=true',
] as const;

/**
 * Configuration given to receive-pack: no `gc --auto` after a push — the repository maintenance
 * worker packs and writes the commit-graph, one run at a time (docs/architecture.md#repository-maintenance).
 */
const RECEIVE_PACK_CONFIG = ['-c', 'receive.autogc=false'] as const;

/** The git arguments that start a service, whatever the transport: its `-c` settings, then the subcommand. */
export function serviceCommand(service: GitService): string[] {
  return service === 'git-upload-pack' ? [...UPLOAD_PACK_CONFIG, 'upload-pack'] : [...RECEIVE_PACK_CONFIG, 'receive-pack'];
}

/** Encodes one pkt-line: 4 hex digits of total length, then the payload. */
export function pktLine(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, '0') + payload;
}

/** A streamed smart-HTTP response. */
export interface GitHttpResponse {
  /** The `Content-Type` to send. */
  contentType: string;
  /**
   * The response body. It errors (is destroyed) when git is killed or its input fails after
   * output has started; git exiting with an error on its own after writing ends it normally.
   */
  body: Readable;
  /**
   * Settles when git has exited: resolves on success or once git, having written its answer,
   * exited on its own; rejects with GitError/BadRequest otherwise.
   */
  done: Promise<void>;
}

/** Options of {@link advertiseRefs} and {@link serviceRpc}. */
export interface GitHttpOptions {
  /** The client's `Git-Protocol` header (e.g. `version=2`). */
  gitProtocol?: string;
  /** Extra environment for git (e.g. variables read by server hooks). */
  env?: Record<string, string>;
  /** Kills git when aborted (e.g. the client went away). */
  signal?: AbortSignal;
}

/**
 * Connects git's stdout to a response stream and waits until git produced its first output (or
 * exited), so that an early failure is thrown before any response is sent. When git closed its
 * output without writing anything, its exit is awaited, so that a failure is thrown rather than
 * sent as an empty 200. `earlyFailure` may turn a failure that happened before git wrote
 * anything into another error (e.g. a client error). Once git has written, the stream ends when
 * git exits on its own, whatever its exit code: what it wrote is its answer — a refusal such as
 * `ERR upload-pack: not our ref <oid>` followed by exit 128 is for the client to print, as
 * git-http-backend relays it. It errors only when git was killed (timeout, abort) or its input
 * failed. The stream never throws at a consumer that has not listened yet.
 */
async function respond(
  g: GitStream,
  contentType: string,
  preamble: string,
  inputDone: Promise<void>,
  earlyFailure: (err: unknown) => Promise<unknown> = async (err) => err,
): Promise<GitHttpResponse> {
  const body = new PassThrough();
  // the consumer (a reply) attaches its own listeners, perhaps after the stream failed; it still
  // sees the failure through the stream's errored state
  body.on('error', () => {});
  let handedOut = false;
  let sawOutput = false;
  if (preamble) body.write(preamble);
  const outputEnded = finished(g.stdout, { writable: false });
  outputEnded.catch(() => {});
  g.stdout.pipe(body, { end: false });
  // A consumer that goes away (client disconnected) stops git.
  body.once('close', () => {
    if (!body.writableFinished) {
      g.kill();
      g.stdout.destroy();
    }
  });
  const done = Promise.all([g.done, inputDone])
    .then(async () => {
      await outputEnded;
      if (!body.destroyed) body.end();
    })
    .catch(async (err: unknown) => {
      if (sawOutput && err instanceof GitError && err.exitCode !== null) {
        await outputEnded.catch(() => {});
        if (!body.destroyed) body.end();
        return;
      }
      g.kill();
      // Only a body given to the caller may error; an unread one is just discarded.
      if (handedOut) body.destroy(err as Error);
      else body.destroy();
      throw err;
    });
  done.catch(() => {});
  const firstOutput = new Promise<void>((resolve) => {
    g.stdout.once('data', () => {
      sawOutput = true;
      resolve();
    });
    g.stdout.once('end', () => resolve());
  });
  try {
    await Promise.race([firstOutput, done]);
    if (sawOutput) {
      // Output may have begun just before a failure; surface a failure that already happened.
      await Promise.race([done, new Promise<void>((r) => setImmediate(r))]);
    } else {
      await done;
    }
  } catch (err) {
    throw sawOutput ? err : await earlyFailure(err);
  }
  handedOut = true;
  return { contentType, body, done };
}

/**
 * Produces the ref advertisement for `GET <repo>/info/refs?service=<service>`: for protocol v0/v1
 * the pkt-line `# service=<service>\n` and a flush packet, then the output of
 * `git <upload-pack|receive-pack> --stateless-rpc --advertise-refs <repo>`; for protocol v2
 * (upload-pack with `version=2` in `Git-Protocol`) git's capability advertisement alone.
 *
 * @param repo absolute path of a bare repository.
 * @param service `git-upload-pack` or `git-receive-pack` (the `service` query parameter).
 * @param opts the client's `Git-Protocol` header, extra env, abort signal.
 * @returns content type `application/x-<service>-advertisement` and the streamed body.
 * @throws BadRequest for an unknown service; GitError when git fails before producing output.
 * @see docs/architecture.md#git-smart-http
 */
export async function advertiseRefs(repo: string, service: string, opts: GitHttpOptions = {}): Promise<GitHttpResponse> {
  const svc = parseService(service);
  const g = spawnGit([...serviceCommand(svc), '--stateless-rpc', '--advertise-refs', '--', value(repo)], {
    env: { ...opts.env, ...protocolEnv(opts.gitProtocol) },
    signal: opts.signal,
  });
  g.stdin.end();
  const preamble = wantsV2(svc, opts.gitProtocol) ? '' : `${pktLine(`# service=${svc}\n`)}0000`;
  return respond(g, `application/x-${svc}-advertisement`, preamble, Promise.resolve());
}

/**
 * Runs one smart-HTTP request of a service: streams the request body (gunzipped as a stream when
 * `Content-Encoding: gzip`) into `git <upload-pack|receive-pack> --stateless-rpc <repo>` and
 * streams git's output back. Nothing is buffered whole. An upload-pack request passes
 * src/git/reachable-wants.ts on its way: a protocol v2 fetch wanting a missing or unreachable
 * commit is answered, as git answers a v0 one, with the packet `ERR upload-pack: not our ref
 * <oid>` (status 200, so the client prints it). A receive-pack runs with its push marker in the
 * repository (src/git/push-markers.ts), removed once git exited.
 *
 * @param repo absolute path of a bare repository.
 * @param service `git-upload-pack` or `git-receive-pack` (from the URL).
 * @param requestBody the raw request body stream.
 * @param opts `contentEncoding` (`gzip`/`x-gzip`/`identity`), `gitProtocol`, extra env, signal.
 * @returns content type `application/x-<service>-result`, the body, and `done` (git exited).
 * @throws BadRequest for an unknown service or content encoding, a body that is not a stream, a
 *   corrupt gzip body, or a request git refused (git exited with a non-zero code before writing
 *   any output: a malformed or truncated pkt-line stream, an empty body, commands of the wrong
 *   service), all when detected before output began; GitError when git was killed (timeout,
 *   abort) or could not start before producing output.
 * @see docs/architecture.md#git-smart-http
 */
export async function serviceRpc(
  repo: string,
  service: string,
  requestBody: Readable,
  opts: GitHttpOptions & { contentEncoding?: string } = {},
): Promise<GitHttpResponse> {
  const svc = parseService(service);
  const encoding = (opts.contentEncoding ?? '').trim().toLowerCase();
  const gzip = encoding === 'gzip' || encoding === 'x-gzip';
  if (!gzip && encoding !== '' && encoding !== 'identity') {
    throw new BadRequest(`Unsupported content encoding: ${opts.contentEncoding}`);
  }
  if (!(requestBody instanceof Readable)) throw new BadRequest('Request body must be a git request stream');
  // a push's quarantine is known to be in use by the marker (src/git/push-markers.ts)
  const marker = svc === 'git-receive-pack' ? await markPush(repo) : null;
  const fetch = svc === 'git-upload-pack';
  const spawned = spawnGit([...serviceCommand(svc), '--stateless-rpc', '--', value(repo)], {
    env: { ...opts.env, ...protocolEnv(opts.gitProtocol) },
    signal: opts.signal,
    ...(fetch && { niceness: UPLOAD_PACK_NICENESS }),
  });
  const g = marker ? removingMarker(spawned, marker) : spawned;
  const stages: NodeJS.ReadWriteStream[] = [];
  if (gzip) stages.push(createGunzip());
  if (fetch) {
    // the request waits for one of the upload-pack slots before it reaches git, unless it lists
    // refs (src/git/upload-pack-slots.ts)
    const slot = new UploadPackSlotGate({ freeRefListing: true });
    void spawned.done.then(slot.release, slot.release);
    stages.push(slot, reachableWantsGate(repo));
  }
  const inputDone = feed(requestBody, stages, g.stdin).catch((err: NodeJS.ErrnoException) => {
    if (gzip && typeof err.code === 'string' && err.code.startsWith('Z_')) throw new BadRequest('Invalid gzip request body');
    throw err;
  });
  inputDone.catch(() => {});
  const contentType = `application/x-${svc}-result`;
  try {
    return await respond(g, contentType, '', inputDone, (err) => refusedRequest(svc, g, err));
  } catch (err) {
    if (!(err instanceof UnreachableWant)) throw err;
    // git's own answer to such a want (an ERR packet), which the client prints as
    // `fatal: remote error: upload-pack: not our ref <oid>`
    const body = Readable.from([Buffer.from(pktLine(`ERR ${err.message}\n`))]);
    return { contentType, body, done: Promise.resolve() };
  }
}

/**
 * `g` whose `done` settles once git exited and `marker` is removed: a marker that cannot be
 * removed fails `done` (the data dir is failing), otherwise git's outcome stands.
 */
export function removingMarker(g: GitStream, marker: PushMarker): GitStream {
  const done = g.done.then(
    async (code) => {
      await marker.remove();
      return code;
    },
    async (error: unknown) => {
      await marker.remove();
      throw error;
    },
  );
  // as spawnGit's: a caller may only watch the streams
  done.catch(() => {});
  return { ...g, done };
}

/**
 * Streams a request body through `stages` into git's stdin. Settles once git has the whole body
 * — or once git closed its input early (a broken or closed pipe): it read what it needed, or
 * refused the rest (`receive.maxInputSize`), and its exit code and output tell what happened, so
 * that is no failure here. The body itself is never destroyed: what git did not read is read and discarded,
 * so a client still sending receives git's answer instead of a reset connection (the server's
 * request timeout bounds how long). Rejects when a stage fails or the client went away.
 */
function feed(body: Readable, stages: NodeJS.ReadWriteStream[], stdin: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const source = new PassThrough();
    let clientFailure: Error | null = null;
    body.pipe(source);
    finished(body, { writable: false }).catch((err: Error) => {
      clientFailure = err;
      source.destroy(err);
    });
    pipeline([source, ...stages, stdin], (err: NodeJS.ErrnoException | null | undefined) => {
      if (!err) return resolve();
      body.unpipe(source);
      body.resume();
      if (clientFailure !== null) return reject(clientFailure);
      // git's stdin broke (a write after git exited) or closed (git exited between writes)
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_PREMATURE_CLOSE') resolve();
      else reject(err);
    });
  });
}

/**
 * Classifies a failure of a service RPC that happened before git wrote any output (`err` may
 * come from git or from feeding it the body, which breaks when git quits reading): git exiting on
 * its own with a non-zero code — it reads nothing but the request body, so it could not parse
 * the request — is the client's fault; a killed git (timeout, abort) or one that could not start
 * is not. Decided by git's exit code only, never by its messages.
 */
async function refusedRequest(service: GitService, g: GitStream, err: unknown): Promise<unknown> {
  // a refusal of the request on its way to git (an unreachable want, a full queue of fetches)
  if (err instanceof GitloomError) return err;
  const exit = await g.done.then(
    () => null,
    (failure: unknown) => failure,
  );
  if (exit instanceof GitError && exit.exitCode !== null && exit.exitCode !== 0) {
    return new BadRequest(`Malformed ${service} request`);
  }
  return err;
}
