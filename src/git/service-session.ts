/**
 * Git's pack protocol over one two-way connection — git over SSH (docs/compatibility.md#git-over-ssh):
 * `git upload-pack <repo>` or `git receive-pack <repo>` (no `--stateless-rpc`) runs for the whole
 * connection, the client's bytes streamed into it and its output streamed back, nothing buffered
 * whole. The same settings as smart HTTP (src/git/smart-http.ts: upload-pack's `-c` options,
 * `GIT_PROTOCOL`, the push environment given by the caller) and the same gate on protocol v2
 * wants (src/git/reachable-wants.ts), applied to every request of the session.
 */
import { PassThrough, pipeline, type Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { GitloomError } from '../errors.js';
import { GitError, spawnGit, value } from './command.js';
import { reachableWantsGate } from './reachable-wants.js';
import { markPush } from './push-markers.js';
import { UPLOAD_PACK_NICENESS, UploadPackSlotGate } from './upload-pack-slots.js';
import { type GitService, pktLine, protocolEnv, removingMarker, serviceCommand } from './smart-http.js';

/** The three streams of a session: the client's bytes, git's answer, and git's messages. */
export interface SessionStreams {
  input: Readable;
  /** Not ended here: the caller ends it once it has sent the exit status. */
  output: Writable;
  /** git's stderr, as it comes. Not ended here. */
  errors: Writable;
}

/** Options of {@link serveSession}. */
export interface SessionOptions {
  /** The client's `GIT_PROTOCOL` (`version=2`); kept only when well-formed. */
  gitProtocol?: string;
  /** Extra environment for git (the push hooks' variables). */
  env?: Record<string, string>;
  /** Kills git when aborted (the client went away). */
  signal?: AbortSignal;
}

/**
 * Serves one `git-upload-pack` or `git-receive-pack` command for its whole duration: streams
 * `streams.input` into git (upload-pack through the reachable-wants gate) and git's stdout and
 * stderr to `streams.output` and `streams.errors`. A fetch refused by the gate is answered, as
 * upload-pack answers a v0 want it does not serve, with the packet `ERR upload-pack: not our ref
 * <oid>` (the client prints `fatal: remote error: …`) and git is stopped. Git's exit ends the
 * session, whether or not the client has closed its side; `streams.input` is never destroyed.
 * A receive-pack runs with its push marker in the repository (src/git/push-markers.ts), removed
 * once git exited.
 *
 * @param repo absolute path of the bare repository.
 * @param service the git service the client asked for.
 * @returns git's exit code (0 on success; 128 for a refused fetch, or when the client left).
 * @throws GitError when git could not start or outlived its stream timeout; Error when reading
 *   the client's bytes failed otherwise.
 */
export async function serveSession(repo: string, service: GitService, streams: SessionStreams, opts: SessionOptions = {}): Promise<number> {
  // a push's quarantine is known to be in use by the marker (src/git/push-markers.ts)
  const marker = service === 'git-receive-pack' ? await markPush(repo) : null;
  const fetch = service === 'git-upload-pack';
  const spawned = spawnGit([...serviceCommand(service), '--', value(repo)], {
    env: { ...opts.env, ...protocolEnv(opts.gitProtocol) },
    signal: opts.signal,
    onStderr: (chunk) => streams.errors.write(chunk),
    ...(fetch && { niceness: UPLOAD_PACK_NICENESS }),
  });
  const g = marker ? removingMarker(spawned, marker) : spawned;
  g.stdout.pipe(streams.output, { end: false });
  const output = finished(g.stdout);
  // awaited below, or not at all when the session is refused: never an unhandled rejection
  output.catch(() => {});
  // the client's bytes reach git through a stream of ours, so that a failure on the way (a
  // refusal, git gone) never destroys the caller's channel, which still answers
  const source = new PassThrough();
  streams.input.pipe(source);
  // the client's request waits for one of the upload-pack slots before it reaches git (src/git/upload-pack-slots.ts)
  const slot = fetch ? new UploadPackSlotGate() : null;
  if (slot) void spawned.done.then(slot.release, slot.release);
  const stages = slot ? [slot, reachableWantsGate(repo, { session: true })] : [];
  let refusal: GitloomError | null = null;
  let failure: Error | null = null;
  const fed = new Promise<void>((resolve) => {
    pipeline([source, ...stages, g.stdin], (error: NodeJS.ErrnoException | null | undefined) => {
      streams.input.unpipe(source);
      if (error instanceof GitloomError) {
        refusal = error;
        g.stdout.unpipe(streams.output);
        streams.output.write(pktLine(`ERR ${error.message}\n`));
        g.kill();
      } else if (error && error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        // git's stdin broke or closed (git exited between writes): its exit code tells the rest
        failure = error;
        g.kill();
      }
      resolve();
    });
  });
  const code = await g.done
    .then(
      (exitCode) => exitCode,
      (error: unknown) => {
        // git exited on its own (its messages went to the client), was stopped here, or the
        // client left: an answer; a git that could not start or ran out of time is a fault
        if (error instanceof GitError && (error.exitCode !== null || refusal || failure || opts.signal?.aborted)) return error.exitCode ?? 128;
        throw error;
      },
    )
    // git is gone: what the client still sends has no reader
    .finally(() => source.destroy());
  await fed;
  if (failure) throw failure;
  if (refusal || opts.signal?.aborted) {
    // nobody reads the rest: a channel that closed takes no more writes
    g.stdout.unpipe(streams.output);
    g.stdout.resume();
    return 128;
  }
  // what git wrote reaches the client before the exit status; a stdout closed early (git
  // stopped) has passed on what it held, any other failure of it is a fault
  await output.catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
  });
  return code;
}
