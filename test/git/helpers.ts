/**
 * Test helpers for the git layer: temp directories and commits built with git plumbing
 * (a throw-away index file, no working tree).
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBareRepository } from '../../src/git/repository.js';

/** Environment for git processes started by tests (isolated from the user's config). */
export function clientEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Tess Tester',
    GIT_AUTHOR_EMAIL: 'tess@example.com',
    GIT_COMMITTER_NAME: 'Tess Tester',
    GIT_COMMITTER_EMAIL: 'tess@example.com',
    ...extra,
  };
}

/** A fresh temp directory and its removal. */
export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `gitloom-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * A maker of new bare repositories (`initBareRepository`, the server's settings) under `dir`:
 * `1.git`, `2.git`, … one per call.
 */
export function repositoryMaker(dir: string): () => Promise<string> {
  let made = 0;
  return async () => {
    const path = join(dir, `${++made}.git`);
    await initBareRepository(path);
    return path;
  };
}

/** Runs git synchronously in a bare repository and returns trimmed stdout. */
export function git(repo: string, args: string[], opts: { input?: string | Buffer; env?: Record<string, string> } = {}): string {
  return execFileSync('git', [`--git-dir=${repo}`, ...args], {
    env: clientEnv('/nonexistent', opts.env),
    input: opts.input,
    maxBuffer: 64 * 1024 * 1024,
  })
    .toString('utf8')
    .trim();
}

/** Result of an asynchronous git run (never rejects). */
export interface AsyncRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git asynchronously (needed when the server under test runs in this process). */
export function gitAsync(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<AsyncRun> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd: opts.cwd, env: opts.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

let counter = 0;

/**
 * Writes a commit into a bare repository: starts from the first parent's tree, applies `files`
 * (content, or null to delete), and commits with the given parents and identity.
 */
export function writeCommit(
  repo: string,
  spec: {
    parents?: string[];
    files?: Record<string, string | null>;
    message?: string;
    author?: { name: string; email: string; date?: string };
  },
): string {
  const index = join(repo, `test-index-${process.pid}-${++counter}`);
  const env = { GIT_INDEX_FILE: index };
  const parents = spec.parents ?? [];
  try {
    if (parents.length > 0) git(repo, ['read-tree', parents[0]], { env });
    else git(repo, ['read-tree', '--empty'], { env });
    for (const [path, content] of Object.entries(spec.files ?? {})) {
      if (content === null) {
        git(repo, ['update-index', '--force-remove', '--', path], { env });
      } else {
        const blob = git(repo, ['hash-object', '-w', '--stdin'], { input: content });
        git(repo, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
      }
    }
    const tree = git(repo, ['write-tree'], { env });
    const author = spec.author ?? { name: 'Ann Author', email: 'ann@example.com' };
    return git(repo, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', spec.message ?? 'commit'], {
      env: {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_AUTHOR_DATE: author.date ?? '@1700000000 +0000',
        GIT_COMMITTER_NAME: 'Carl Committer',
        GIT_COMMITTER_EMAIL: 'carl@example.com',
        GIT_COMMITTER_DATE: '@1700000100 +0000',
      },
    });
  } finally {
    rmSync(index, { force: true });
  }
}

/** Content of `path` in `commit`. */
export function show(repo: string, commit: string, path: string): string {
  return git(repo, ['cat-file', 'blob', `${commit}:${path}`]);
}
