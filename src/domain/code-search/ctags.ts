/**
 * Symbols of the code index from Universal Ctags (docs/compatibility.md#code-search): one
 * long-lived ctags per indexing run in its interactive mode (`--_interactive=sandbox`: ctags
 * confines itself with seccomp, reading nothing but stdin and writing nothing but stdout), fed
 * file texts over stdin — `{"command":"generate-tags","filename":"<path>","size":N}` and N bytes,
 * no temporary files — and answering JSON lines: the tags, then `{"_type":"completed"}`.
 *
 * Files are sent one at a time. A file's answer is bounded: at most {@link MAX_TAGS_PER_FILE} tags
 * are kept (the rest read and dropped), a line of output longer than {@link MAX_LINE_CHARS} is
 * dropped, and a file ctags does not finish within {@link TAG_TIMEOUT_MS} kills it. A file on
 * which ctags crashes, errs or times out gets no symbols and the reason; the next file starts a
 * fresh ctags. After {@link MAX_TIMEOUTS_PER_RUN} timeouts in one run the rest of its files get
 * no symbols either, so a push of many files that hang ctags holds the index worker for a minute
 * at most. ctags runs with a fixed argv (`--options=NONE`: no option files of the user or
 * the working directory), an empty environment and `/` as its working directory.
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';

/** Tags kept per file; the rest are dropped and the file notes it. */
export const MAX_TAGS_PER_FILE = 5000;
/** Wall-clock time ctags may take over one file, ms. */
export const TAG_TIMEOUT_MS = 5000;
/** Timeouts after which a run asks ctags no more. */
export const MAX_TIMEOUTS_PER_RUN = 10;
/** Longest line of ctags output read (characters); longer ones (a tag of a huge name) are dropped. */
const MAX_LINE_CHARS = 16 * 1024;
/** Longest name, kind or scope kept (characters). */
const MAX_FIELD_CHARS = 500;

const ARGS = ['--options=NONE', '--_interactive=sandbox', '--output-format=json', '--fields=+nKzsl', '--fields=-P', '--excmd=number'];

/** A definition found in a file. */
export interface Tag {
  name: string;
  /** Universal Ctags' kind, long form: `function`, `class`, `method`, … */
  kind: string;
  /** 1-based. */
  line: number;
  /** The enclosing class, namespace, … or null. */
  scope: string | null;
  /** Universal Ctags' language name (`TypeScript`), or null. */
  language: string | null;
}

/** The tags of a file, and why they are missing or cut (null: all there). */
export interface FileTags {
  tags: Tag[];
  skipped: string | null;
}

const execFileAsync = promisify(execFile);
const located = new Map<string, Promise<string | null>>();

/**
 * The absolute path of the Universal Ctags binary to run, or null when there is none (the code
 * index then holds no symbols). `setting` is the configuration's `ctags` (`GITLOOM_CTAGS`): `off`
 * → null; a path → that binary if its `--version` says Universal Ctags with the interactive
 * sandbox; null → `ctags-universal`, else `ctags`, found on PATH and checked alike. Looked up once
 * per setting and process.
 */
export function locateCtags(setting: string | null): Promise<string | null> {
  const key = setting ?? '';
  let found = located.get(key);
  if (!found) {
    found = setting === 'off' ? Promise.resolve(null) : setting ? checked(setting) : onPath(['ctags-universal', 'ctags']);
    located.set(key, found);
  }
  return found;
}

async function onPath(names: string[]): Promise<string | null> {
  for (const name of names) {
    for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(path.isAbsolute)) {
      const found = await checked(path.join(dir, name));
      if (found) return found;
    }
  }
  return null;
}

/** `binary` when it is an executable Universal Ctags with the interactive sandbox, else null. */
async function checked(binary: string): Promise<string | null> {
  try {
    await fs.access(binary, fs.constants.X_OK);
    const { stdout } = await execFileAsync(binary, ['--options=NONE', '--list-features'], { env: {}, cwd: '/', timeout: 10_000, maxBuffer: 1024 * 1024 });
    const version = await execFileAsync(binary, ['--options=NONE', '--version'], { env: {}, cwd: '/', timeout: 10_000, maxBuffer: 1024 * 1024 });
    return /^Universal Ctags/.test(version.stdout) && /^sandbox\b/m.test(stdout) && /^json\b/m.test(stdout) ? binary : null;
  } catch (error) {
    // not there, not executable, or not a working ctags: looked for elsewhere
    if (error instanceof Error) return null;
    throw error;
  }
}

type Ctags = ChildProcessByStdio<Writable, Readable, null>;

/** One indexing run's ctags: {@link CtagsSession.tagsOf} per file, {@link CtagsSession.close} at the end. */
export class CtagsSession {
  private process: Ctags | null = null;
  /** The answer being read: called with each complete output line, or with null when ctags ended. */
  private onLine: ((line: string | null) => void) | null = null;
  private timeouts = 0;

  /**
   * @param binary the absolute path {@link locateCtags} answered.
   * @param limits the time a file may take (ms) and the timeouts a run allows; the defaults are
   *   {@link TAG_TIMEOUT_MS} and {@link MAX_TIMEOUTS_PER_RUN}.
   */
  constructor(
    private readonly binary: string,
    private readonly limits = { timeoutMs: TAG_TIMEOUT_MS, maxTimeouts: MAX_TIMEOUTS_PER_RUN },
  ) {}

  /**
   * The tags of one file's text. Never throws for what ctags does with the text: a crash, an
   * error or a timeout gives no tags and the reason (and the next file gets a fresh ctags).
   *
   * @param filePath the repository path (ctags picks the language from its name).
   */
  async tagsOf(filePath: string, text: Buffer): Promise<FileTags> {
    const { timeoutMs, maxTimeouts } = this.limits;
    if (this.timeouts >= maxTimeouts) return { tags: [], skipped: `Universal Ctags timed out on ${maxTimeouts} files of this indexing run` };
    const ctags = this.process ?? this.start();
    const tags: Tag[] = [];
    let dropped = 0;
    const outcome = await new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => {
        this.timeouts++;
        resolve(`Universal Ctags took longer than ${timeoutMs / 1000} s`);
      }, timeoutMs);
      this.onLine = (line) => {
        if (line === null) {
          clearTimeout(timer);
          resolve('Universal Ctags failed on this file');
          return;
        }
        const record = parse(line);
        if (record?._type === 'completed') {
          clearTimeout(timer);
          resolve(null);
        } else if (record?._type === 'error') {
          clearTimeout(timer);
          resolve(`Universal Ctags failed on this file: ${String(record.message).slice(0, 200)}`);
        } else if (record?._type === 'tag') {
          const tag = tagOf(record);
          if (tag && tags.length < MAX_TAGS_PER_FILE) tags.push(tag);
          else if (tag) dropped++;
        }
      };
      ctags.stdin.write(`${JSON.stringify({ command: 'generate-tags', filename: filePath, size: text.length })}\n`);
      ctags.stdin.write(text);
    });
    this.onLine = null;
    if (outcome !== null) {
      this.kill();
      return { tags: [], skipped: outcome };
    }
    return { tags, skipped: dropped > 0 ? `more than ${MAX_TAGS_PER_FILE.toLocaleString('en-US')} symbols: the first ones kept` : null };
  }

  /** Ends ctags. */
  close(): void {
    if (this.process) {
      this.process.stdin.end();
      this.kill();
    }
  }

  private start(): Ctags {
    const ctags = spawn(this.binary, ARGS, { stdio: ['pipe', 'pipe', 'ignore'], env: {}, cwd: '/' });
    this.process = ctags;
    // a write to a ctags that died fails here; the reader below reports the end
    ctags.stdin.on('error', () => ctags.kill('SIGKILL'));
    ctags.on('error', () => this.ended(ctags));
    ctags.on('exit', () => this.ended(ctags));
    let pending = '';
    let overlong = false;
    ctags.stdout.setEncoding('utf8');
    ctags.stdout.on('data', (chunk: string) => {
      let start = 0;
      for (let newline = chunk.indexOf('\n'); newline >= 0; newline = chunk.indexOf('\n', start)) {
        const line = overlong ? '' : pending + chunk.slice(start, newline);
        pending = '';
        overlong = false;
        start = newline + 1;
        if (line.length > 0 && line.length <= MAX_LINE_CHARS && this.process === ctags) this.onLine?.(line);
      }
      if (!overlong) pending += chunk.slice(start);
      if (pending.length > MAX_LINE_CHARS) {
        pending = '';
        overlong = true;
      }
    });
    return ctags;
  }

  private ended(ctags: Ctags): void {
    if (this.process !== ctags) return;
    this.process = null;
    this.onLine?.(null);
  }

  private kill(): void {
    const ctags = this.process;
    this.process = null;
    ctags?.kill('SIGKILL');
  }
}

function parse(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

/** A tag record's fields, or null when it lacks a name, kind or line. */
function tagOf(record: Record<string, unknown>): Tag | null {
  const { name, kind, line, scope, language } = record;
  if (typeof name !== 'string' || name === '' || typeof kind !== 'string' || typeof line !== 'number' || !Number.isSafeInteger(line)) return null;
  return {
    name: name.slice(0, MAX_FIELD_CHARS),
    kind: kind.slice(0, MAX_FIELD_CHARS),
    line,
    scope: typeof scope === 'string' ? scope.slice(0, MAX_FIELD_CHARS) : null,
    language: typeof language === 'string' ? language.slice(0, MAX_FIELD_CHARS) : null,
  };
}
