/**
 * Object reads through one long-lived `git cat-file --batch-command` per repository
 * (docs/architecture.md#git-objects-through-a-long-lived-reader): commits, trees and small blobs
 * by id, and `<id>^{commit}` to tell whether an id names a commit, without starting git for each
 * read. A read is a line written to the reader and its answer; reads of many requests share the
 * process, answered in the order asked.
 *
 * Only names that never depend on refs are asked (a full object id, `<id>^{commit}`,
 * `<id>:<path>`): what the reader answers for them cannot change while it runs, and objects
 * written after it started (a push, a repack) are found as a new git process would find them,
 * since git looks at the packs again when an object is not in those it knows.
 *
 * Bounds: at most {@link MAX_READERS} processes (the least recently used one is ended first), each
 * ended after {@link IDLE_MS} without a read, with a delta base cache of 16 MiB (git's default is
 * 96 MiB), and killed when an answer takes longer than {@link ANSWER_TIMEOUT_MS}.
 */
import { GitError, gitDir, spawnGit, type GitStream } from './command.js';

/** The most reader processes at once, over all repositories. */
const MAX_READERS = 8;
/** A reader without a read for this long ends (ms). */
const IDLE_MS = 10_000;
/** A reader that takes longer than this to answer is killed, failing the reads waiting on it (ms). */
const ANSWER_TIMEOUT_MS = 120_000;

/** The type, size and id of an object (`info` of `git cat-file --batch-command`). */
export interface ObjectInfo {
  /** The object's full id (for `<id>^{commit}`, the commit's). */
  oid: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  /** Size in bytes. */
  size: number;
}

/** An object with its bytes (`contents` of `git cat-file --batch-command`). */
export interface ObjectContents extends ObjectInfo {
  content: Buffer;
}

/** An answer line for a found object: `<oid> <type> <size>`; anything else (`<name> missing`, `<name> ambiguous`) finds none. */
const FOUND = /^([0-9a-f]{40}|[0-9a-f]{64}) (blob|tree|commit|tag) (\d+)$/;

interface Read {
  command: 'info' | 'contents';
  resolve(answer: ObjectContents | ObjectInfo | null): void;
  reject(error: Error): void;
}

/** One `cat-file --batch-command` process of a repository and the reads it has not answered yet. */
class Reader {
  private readonly git: GitStream;
  private readonly waiting: Read[] = [];
  /** Bytes of an answer line not complete yet. */
  private line: Buffer[] = [];
  /** The object whose bytes (and the line feed after them) are arriving. */
  private body: { info: ObjectInfo; chunks: Buffer[]; have: number } | null = null;
  private idle: NodeJS.Timeout | undefined;
  private answerBy: NodeJS.Timeout | undefined;
  private failure: Error | null = null;

  constructor(
    repo: string,
    private readonly ended: (reader: Reader) => void,
    env: Record<string, string> = {},
  ) {
    this.git = spawnGit(['-c', 'core.deltaBaseCacheLimit=16m', gitDir(repo), 'cat-file', '--batch-command'], { timeoutMs: 0, env });
    this.git.stdout.on('data', (chunk: Buffer) => this.take(chunk));
    this.git.done.then(
      () => this.fail(new GitError(['cat-file', '--batch-command'], 0, '', 'ended')),
      (error: Error) => this.fail(error),
    );
    this.git.keepAlive(false);
  }

  /** Asks for `names`; resolves with the answers in the same order (null: no such object). */
  ask<T extends ObjectInfo>(command: Read['command'], names: readonly string[]): Promise<(T | null)[]> {
    if (this.failure) return Promise.reject(this.failure);
    clearTimeout(this.idle);
    if (this.waiting.length === 0) {
      this.git.keepAlive(true);
      this.answerBy = setTimeout(() => this.git.kill(), ANSWER_TIMEOUT_MS);
    }
    const answers = names.map(
      (name) =>
        new Promise<T | null>((resolve, reject) => {
          this.waiting.push({ command, resolve: resolve as Read['resolve'], reject });
          this.git.stdin.write(`${command} ${name}\n`);
        }),
    );
    return Promise.all(answers);
  }

  /** Ends the process once it has answered what it was asked; it takes no more reads. */
  end(): void {
    clearTimeout(this.idle);
    this.ended(this);
    this.git.stdin.end();
  }

  private take(chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0) {
      if (this.body) {
        const { info, chunks } = this.body;
        const need = info.size + 1 - this.body.have;
        chunks.push(data.subarray(0, need));
        this.body.have += Math.min(need, data.length);
        data = data.subarray(need);
        if (this.body.have === info.size + 1) {
          this.body = null;
          this.answer({ ...info, content: Buffer.concat(chunks).subarray(0, info.size) });
        }
        continue;
      }
      const eol = data.indexOf(0x0a);
      if (eol < 0) {
        this.line.push(data);
        return;
      }
      this.line.push(data.subarray(0, eol));
      data = data.subarray(eol + 1);
      const text = Buffer.concat(this.line).toString('latin1');
      this.line = [];
      const found = FOUND.exec(text);
      if (!found) this.answer(null);
      else {
        const info: ObjectInfo = { oid: found[1], type: found[2] as ObjectInfo['type'], size: Number(found[3]) };
        if (this.waiting[0]?.command === 'contents') this.body = { info, chunks: [], have: 0 };
        else this.answer(info);
      }
    }
  }

  private answer(answer: ObjectContents | ObjectInfo | null): void {
    const read = this.waiting.shift();
    if (!read) {
      this.git.kill();
      return;
    }
    read.resolve(answer);
    clearTimeout(this.answerBy);
    if (this.waiting.length > 0) this.answerBy = setTimeout(() => this.git.kill(), ANSWER_TIMEOUT_MS);
    else {
      this.git.keepAlive(false);
      this.idle = setTimeout(() => this.end(), IDLE_MS).unref();
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    clearTimeout(this.idle);
    clearTimeout(this.answerBy);
    this.ended(this);
    for (const read of this.waiting.splice(0)) read.reject(this.failure);
  }
}

/** The running readers by repository, least recently used first. */
const readers = new Map<string, Reader>();

function readerOf(repo: string): Reader {
  let reader = readers.get(repo);
  if (reader) readers.delete(repo);
  else {
    if (readers.size >= MAX_READERS) (readers.values().next().value as Reader).end();
    reader = new Reader(repo, (ended) => {
      if (readers.get(repo) === ended) readers.delete(repo);
    });
  }
  readers.set(repo, reader);
  return reader;
}

function checkNames(names: readonly string[]): void {
  for (const name of names) if (/[\n\0]/.test(name) || name.length === 0) throw new Error(`Object name not readable in a batch: ${JSON.stringify(name)}`);
}

/**
 * The id, type and size of objects (`info <name>` of `git cat-file --batch-command`).
 *
 * @param repo absolute path of a bare repository.
 * @param names object names that do not depend on refs: `<id>`, `<id>^{commit}`, `<id>:<path>`.
 * @returns for each name, in order, its object, or null when there is none (missing, not
 *   peelable to the type asked, an ambiguous name).
 * @throws Error (a programming error) for a name holding a line feed or NUL; GitError when the
 *   reader fails (not a repository, killed, no answer within two minutes).
 */
export function objectInfo(repo: string, names: readonly string[]): Promise<(ObjectInfo | null)[]> {
  checkNames(names);
  if (names.length === 0) return Promise.resolve([]);
  return readerOf(repo).ask<ObjectInfo>('info', names);
}

/**
 * Objects with their bytes (`contents <name>` of `git cat-file --batch-command`), kept in memory
 * whole: for commits, trees and blobs whose size the caller knows to be small.
 *
 * @param repo absolute path of a bare repository.
 * @param names object names that do not depend on refs (see {@link objectInfo}).
 * @returns for each name, in order, its object and bytes, or null when there is none.
 * @throws as {@link objectInfo}.
 */
export function objectContents(repo: string, names: readonly string[]): Promise<(ObjectContents | null)[]> {
  checkNames(names);
  if (names.length === 0) return Promise.resolve([]);
  return readerOf(repo).ask<ObjectContents>('contents', names);
}

/** A reader of the caller's own: see {@link openObjectReader}. */
export interface OwnObjectReader {
  /** As {@link objectInfo}. */
  info(names: readonly string[]): Promise<(ObjectInfo | null)[]>;
  /** As {@link objectContents}. */
  contents(names: readonly string[]): Promise<(ObjectContents | null)[]>;
  /** Ends the process once it has answered what it was asked. */
  end(): void;
}

/**
 * A reader of the caller's own, not shared and not counted in {@link MAX_READERS}, which the
 * caller ends: for a bulk read (megabytes of blobs, every small blob of a push) that would hold up
 * the small reads queued behind it on the repository's shared reader, or for objects only an
 * environment shows (a push's quarantine).
 *
 * @param repo absolute path of a bare repository.
 * @param env environment of the git process (e.g. `GIT_OBJECT_DIRECTORY` of a quarantine).
 */
export function openObjectReader(repo: string, env: Record<string, string> = {}): OwnObjectReader {
  const reader = new Reader(repo, () => undefined, env);
  const ask = <T extends ObjectInfo>(command: Read['command'], names: readonly string[]) => {
    checkNames(names);
    return names.length === 0 ? Promise.resolve([]) : reader.ask<T>(command, names);
  };
  return {
    info: (names) => ask<ObjectInfo>('info', names),
    contents: (names) => ask<ObjectContents>('contents', names),
    end: () => reader.end(),
  };
}

/** Ends every reader once it has answered what it was asked (at server shutdown). */
export function endObjectReaders(): void {
  for (const reader of [...readers.values()]) reader.end();
}
