/**
 * Only reachable commits are served by id, in every protocol version (docs/architecture.md#git-smart-http). upload-pack honours `uploadpack.allowReachableSHA1InWant` in protocol v0
 * and v1 only: in protocol v2 it packs any object a `want` names ("Wants can be anything and are
 * not limited to advertised objects", gitprotocol-v2), so a commit that a force-push or a branch
 * deletion left unreachable would stay fetchable until it is pruned.
 *
 * {@link reachableWantsGate} reads an upload-pack request as it streams to git. In a v2 `fetch`
 * command (pkt-lines: `command=fetch`, capabilities, delimiter `0001`, arguments, flush `0000`)
 * it collects the `want <oid>` arguments, holds back the flush — git acts only once the
 * arguments end — and checks them the way upload-pack checks v0 wants under
 * `allowReachableSHA1InWant`: every wanted object must exist, and every wanted commit (or tag,
 * peeled) must be reachable from a ref (`git rev-list --stdin --not --all` prints nothing).
 * Wanted trees and blobs are served by id, as in v0: a partial clone's lazy fetches ask for
 * them. Anything else (v0/v1 requests, `ls-refs`) passes through untouched.
 *
 * Parsing follows git's: 4 hex digits of length in either case, `0000` flush, `0001`
 * delimiter, `0002` response end; a want's object id is the first 40 hex digits after `want `
 * (git reads no further); requests git itself cannot parse are passed on for git to refuse.
 * Repositories use SHA-1 object ids.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { BadRequest } from '../errors.js';
import { gitDir, runGit } from './command.js';

/** A `want` the repository does not serve: missing, or a commit no ref reaches. */
export class UnreachableWant extends BadRequest {
  /** @param objectId the refused object id. */
  constructor(readonly objectId: string) {
    super(`upload-pack: not our ref ${objectId}`, { code: 'GITLOOM_ERR_NOT_OUR_REF' });
  }
}

/** Most distinct wants one request may name (a clone wants one object per ref). */
const MAX_WANTS = 200_000;
const HEX = /^[0-9a-fA-F]{4}$/;
const WANT = /^want ([0-9a-fA-F]{40})/;

/**
 * The first wanted object `repo` does not serve (see the module), or null when it serves all.
 *
 * @param repo absolute path of a bare repository.
 * @param wants lower-case object ids.
 * @throws GitError when git fails.
 */
export async function firstUnreachableWant(repo: string, wants: readonly string[]): Promise<string | null> {
  if (wants.length === 0) return null;
  const checked = await runGit([gitDir(repo), 'cat-file', '--batch-check=%(objectname) %(objecttype)'], { input: `${wants.join('\n')}\n` });
  const history: string[] = [];
  for (const line of checked.stdout.toString('utf8').split('\n')) {
    if (line === '') continue;
    const [id, type] = line.split(' ');
    if (type === 'missing') return id;
    if (type === 'commit' || type === 'tag') history.push(id);
  }
  if (history.length === 0) return null;
  const unreachable = await runGit([gitDir(repo), 'rev-list', '--stdin', '--not', '--all'], { input: `${history.join('\n')}\n` });
  const first = unreachable.stdout.toString('utf8').split('\n').filter(Boolean);
  if (first.length === 0) return null;
  return first.find((id) => history.includes(id)) ?? first[0];
}

type Phase = 'command' | 'arguments' | 'through';

/** Options of {@link reachableWantsGate}. */
export interface ReachableWantsOptions {
  /** Decides the wants (default {@link firstUnreachableWant}). */
  check?: (repo: string, wants: readonly string[]) => Promise<string | null>;
  /**
   * The stream is a whole upload-pack session (git over SSH) rather than one smart-HTTP request:
   * every request in it is checked — a v2 session sends `ls-refs`, then one `fetch` per
   * negotiation round, each ending with a flush — not only the first.
   */
  session?: boolean;
}

/**
 * A pass-through stream for an upload-pack request body that refuses a protocol v2 `fetch`
 * wanting an object `repo` does not serve (see the module): it errors with
 * {@link UnreachableWant} before git has seen the end of the request, so git sends nothing.
 * Every other byte is forwarded as it arrives; at most one pkt-line is held. Without
 * `options.session` only the first request is read and the rest passes untouched.
 *
 * @param repo absolute path of the bare repository the request is for.
 * @param options the check of the wants, and whether the stream is a whole session.
 * @example pipeline(body, reachableWantsGate(repo), git.stdin, done)
 */
export function reachableWantsGate(repo: string, options: ReachableWantsOptions = {}): Transform {
  const check = options.check ?? firstUnreachableWant;
  let phase: Phase = 'command';
  let fetch = false;
  let pending: Buffer = Buffer.alloc(0);
  const wants = new Set<string>();

  /** Forwards the complete packets of `pending`; returns true at the flush ending the arguments. */
  const scan = (gate: Transform): boolean => {
    let offset = 0;
    while (phase !== 'through' && pending.length - offset >= 4) {
      const header = pending.toString('latin1', offset, offset + 4);
      if (!HEX.test(header)) {
        phase = 'through';
        break;
      }
      const length = parseInt(header, 16);
      if (length === 0) {
        // the flush ends the request: git acts on it only once it is forwarded
        gate.push(pending.subarray(0, offset));
        pending = pending.subarray(offset);
        return true;
      }
      if (length === 1 || length === 2) {
        if (length === 1 && phase === 'command') phase = 'arguments';
        offset += 4;
        continue;
      }
      if (length < 4) {
        phase = 'through';
        break;
      }
      if (pending.length - offset < length) break;
      const line = pending.toString('latin1', offset + 4, offset + length);
      if (phase === 'command' && line.startsWith('command=')) fetch = line.replace(/\n$/, '') === 'command=fetch';
      if (phase === 'arguments') {
        const want = WANT.exec(line);
        if (want) wants.add(want[1].toLowerCase());
        if (wants.size > MAX_WANTS) throw new BadRequest(`Too many wants: more than ${MAX_WANTS}`);
      }
      offset += length;
    }
    gate.push(pending.subarray(0, offset));
    pending = pending.subarray(offset);
    if (phase === 'through') {
      gate.push(pending);
      pending = Buffer.alloc(0);
    }
    return false;
  };

  /**
   * Scans what is pending up to the flush ending a request, checks a fetch's wants there, then
   * forwards the flush: and the rest untouched (one request), or goes on with the next request
   * (a session). Calls `done` once the pending bytes are handled or refused.
   */
  const advance = (gate: Transform, done: TransformCallback): void => {
    let atFlush: boolean;
    try {
      atFlush = scan(gate);
    } catch (error) {
      return done(error as Error);
    }
    if (!atFlush) return done();
    const wanted = fetch ? [...wants] : null;
    const flushed = options.session ? pending.subarray(0, 4) : pending;
    pending = options.session ? pending.subarray(4) : Buffer.alloc(0);
    phase = options.session ? 'command' : 'through';
    fetch = false;
    wants.clear();
    const forward = () => {
      gate.push(flushed);
      if (options.session) advance(gate, done);
      else done();
    };
    if (wanted === null) return forward();
    check(repo, wanted).then(
      (refused) => (refused === null ? forward() : done(new UnreachableWant(refused))),
      (error: unknown) => done(error as Error),
    );
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (phase === 'through') return done(null, chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      advance(this, done);
    },
    flush(done: TransformCallback) {
      done(null, pending);
    },
  });
}
