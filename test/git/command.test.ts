import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/errors.js';
import { GitError, gitAtLeast, gitText, gitVersion, runGit, spawnGit, value } from '../../src/git/command.js';

describe('git runner', () => {
  it('refuses values that could be read as options', () => {
    expect(() => value('--upload-pack=evil')).toThrow(BadRequest);
    expect(() => value('-')).toThrow(BadRequest);
    expect(() => value('')).toThrow(BadRequest);
    expect(() => value('a\nb')).toThrow(BadRequest);
    expect(value('main').text).toBe('main');
  });

  it('runs git in a fixed environment', async () => {
    const out = await gitText(['var', 'GIT_COMMITTER_IDENT'], {
      env: { GIT_COMMITTER_NAME: 'N', GIT_COMMITTER_EMAIL: 'n@x', GIT_COMMITTER_DATE: '@0 +0000' },
    });
    expect(out.trim()).toBe('N <n@x> 0 +0000');
    // no global or system config leaks in
    const res = await runGit(['config', '--global', '--list'], { okExitCodes: [0, 1] });
    expect(res.stdout.toString()).toBe('');
    expect(await gitAtLeast(2, 38)).toBe(true);
    expect((await gitVersion())[0]).toBeGreaterThanOrEqual(2);
  });

  it('raises GitError with args, exit code and stderr', async () => {
    const err = await runGit(['--git-dir=/nonexistent/repo.git', 'rev-parse', 'HEAD']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    const gitErr = err as GitError;
    expect(gitErr.exitCode).toBe(128);
    expect(gitErr.args).toEqual(['--git-dir=/nonexistent/repo.git', 'rev-parse', 'HEAD']);
    expect(gitErr.stderr.length).toBeGreaterThan(0);
    const ok = await runGit(['--git-dir=/nonexistent/repo.git', 'rev-parse', 'HEAD'], { okExitCodes: [128] });
    expect(ok.exitCode).toBe(128);
  });

  it('feeds stdin and kills on timeout or abort', async () => {
    const hashed = await gitText(['hash-object', '--stdin'], { input: 'hello\n' });
    expect(hashed.trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');

    // `hash-object --stdin` waits for stdin that never ends
    const slow = spawnGit(['hash-object', '--stdin'], { timeoutMs: 200 });
    slow.stdout.resume();
    const started = Date.now();
    await expect(slow.done).rejects.toThrow(/timed out after 200 ms/);
    expect(Date.now() - started).toBeLessThan(5000);

    const controller = new AbortController();
    const aborted = spawnGit(['hash-object', '--stdin'], { signal: controller.signal });
    aborted.stdout.resume();
    setTimeout(() => controller.abort(), 50);
    await expect(aborted.done).rejects.toThrow(/aborted/);

    const streamed = spawnGit(['hash-object', '--stdin']);
    const chunks: Buffer[] = [];
    streamed.stdout.on('data', (c: Buffer) => chunks.push(c));
    streamed.stdin.end('hello\n');
    expect(await streamed.done).toBe(0);
    expect(Buffer.concat(chunks).toString().trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('keeps streamed output for a reader that comes after git has exited', async () => {
    // a reply is written at the end of its event-loop turn, so a handler's stream may be piped
    // only after git is done; Node drains a child's unread stdout when the child exits
    const late = spawnGit(['hash-object', '--stdin']);
    late.stdin.end('hello\n');
    expect(await late.done).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const chunks: Buffer[] = [];
    for await (const chunk of late.stdout) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString().trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('ends git on a broken pipe when the reader of its stream gives up', async () => {
    const repo = await mkdtemp(path.join(os.tmpdir(), 'gitloom-stream-'));
    try {
      await runGit(['init', '-q', '--bare', repo]);
      const blob = (await gitText([`--git-dir=${repo}`, 'hash-object', '-w', '--stdin'], { input: Buffer.alloc(4 * 1024 * 1024, 'x') })).trim();
      const big = spawnGit([`--git-dir=${repo}`, 'cat-file', 'blob', blob]);
      big.stdin.end();
      // the first chunk read, the rest (megabytes, beyond every pipe buffer) is never wanted
      await new Promise((resolve) => big.stdout.once('data', resolve));
      big.stdout.destroy();
      await expect(big.done).rejects.toThrow(GitError);
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});
