/**
 * A job's checkout on an agent (src/agent/checkout.ts) from a real `git http-backend` served here
 * under the protocol's path, which, as the server, wants the job token as a Bearer header: the
 * token reaches git through its environment only; full and shallow clones; the ref fallback for a
 * commit no branch holds; Git LFS objects downloaded, checked and written in place.
 */
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutJob, jobGitEnv } from '../../src/agent/checkout.js';
import { clientEnv, tempDir } from '../git/helpers.js';

const TOKEN = 'job-token-0123456789';
const LFS_CONTENT = Buffer.from('the large file content\n');
const LFS_OID = createHash('sha256').update(LFS_CONTENT).digest('hex');

let dir: { path: string; remove(): void };
let server: Server;
let url: string;
let bare: string;
let head: string;
let first: string;
let pullCommit: string;
/** Requests seen: method, path, whether the token came. */
const seen: { path: string; authorized: boolean }[] = [];
/** What the LFS path answers: the real content unless changed. */
let lfsBody: Buffer = LFS_CONTENT;

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: clientEnv('/nonexistent') })
    .toString('utf8')
    .trim();
}

beforeAll(async () => {
  dir = tempDir('agent-checkout');
  const work = path.join(dir.path, 'work');
  mkdirSync(work);
  sh(work, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(work, 'README'), 'one\n');
  sh(work, 'add', '.');
  sh(work, 'commit', '-qm', 'one');
  first = sh(work, 'rev-parse', 'HEAD');
  mkdirSync(path.join(work, 'assets'));
  writeFileSync(path.join(work, 'assets', 'big.bin'), `version https://git-lfs.github.com/spec/v1\noid sha256:${LFS_OID}\nsize ${LFS_CONTENT.length}\n`);
  writeFileSync(path.join(work, 'README'), 'two\n');
  sh(work, 'add', '.');
  sh(work, 'commit', '-qm', 'two');
  head = sh(work, 'rev-parse', 'HEAD');
  bare = path.join(dir.path, 'project.git');
  execFileSync('git', ['clone', '-q', '--bare', work, bare], { env: clientEnv('/nonexistent') });
  // a pull request's commit: on no branch, only under refs/pull/
  writeFileSync(path.join(work, 'README'), 'pull\n');
  sh(work, 'commit', '-qam', 'pull');
  pullCommit = sh(work, 'rev-parse', 'HEAD');
  sh(work, 'push', '-q', bare, `HEAD:refs/pull/1/head`);

  server = createServer((req, res) => {
    const authorized = req.headers.authorization === `Bearer ${TOKEN}`;
    const u = new URL(req.url ?? '/', 'http://x');
    seen.push({ path: u.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"status":401,"detail":"job token refused"}');
      return;
    }
    if (u.pathname.startsWith('/~agent/job/lfs/')) {
      const oid = u.pathname.slice('/~agent/job/lfs/'.length);
      if (oid !== LFS_OID) return void res.writeHead(404).end('{"status":404,"detail":"no such object"}');
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(lfsBody);
    }
    const prefix = '/~agent/job/git';
    if (!u.pathname.startsWith(prefix)) return void res.writeHead(404).end();
    // git http-backend as a CGI program, the job's project as `project.git`
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: dir.path,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: `/project.git${u.pathname.slice(prefix.length)}`,
        REQUEST_METHOD: req.method,
        QUERY_STRING: u.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
      },
    });
    req.pipe(cgi.stdin);
    const out: Buffer[] = [];
    cgi.stdout.on('data', (c: Buffer) => out.push(c));
    cgi.on('close', () => {
      const all = Buffer.concat(out);
      const split = all.indexOf('\r\n\r\n');
      const headers = all.subarray(0, split).toString('utf8').split('\r\n');
      let status = 200;
      const fields: Record<string, string> = {};
      for (const line of headers) {
        const [name, ...rest] = line.split(':');
        if (name.toLowerCase() === 'status') status = Number(rest.join(':').trim().split(' ')[0]);
        else fields[name] = rest.join(':').trim();
      }
      res.writeHead(status, fields).end(all.subarray(split + 4));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  dir?.remove();
});

const lines: string[] = [];
const options = (o: { cloneDepth?: number | null; withLfs?: boolean } = {}) => ({
  cloneDepth: o.cloneDepth ?? null,
  withLfs: o.withLfs ?? false,
  withSubmodules: false,
  credential: { type: 'DefaultCredential' } as never,
  signal: new AbortController().signal,
  log: (line: string) => lines.push(line),
});

function target(name: string): string {
  const t = path.join(dir.path, name);
  mkdirSync(t);
  return t;
}

describe('checkoutJob', () => {
  it('gives git the token as an http.extraHeader through the environment', () => {
    expect(jobGitEnv('abc')).toEqual({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: 'Authorization: Bearer abc' });
  });

  it('clones with the token, and the clone keeps no trace of it', async () => {
    const t = target('full2');
    seen.length = 0;
    await checkoutJob(url, { jobToken: TOKEN, commitHash: head, refName: 'refs/heads/main' }, t, options());
    expect(sh(t, 'rev-parse', 'HEAD')).toBe(head);
    expect(readFileSync(path.join(t, 'README'), 'utf8')).toBe('two\n');
    expect(sh(t, 'remote', 'get-url', 'origin')).toBe(`${url}/~agent/job/git`);
    expect(readFileSync(path.join(t, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.authorized)).toBe(true);
    // without LFS the pointer stays a pointer
    expect(readFileSync(path.join(t, 'assets', 'big.bin'), 'utf8')).toContain(LFS_OID);
  });

  it('fails without the right token, naming no token', async () => {
    const t = target('refused');
    const error = await checkoutJob(url, { jobToken: 'wrong-token', commitHash: head, refName: 'refs/heads/main' }, t, options()).then(
      () => null,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).not.toContain('wrong-token');
  });

  it('fetches a shallow history at the clone depth', async () => {
    const t = target('shallow');
    await checkoutJob(url, { jobToken: TOKEN, commitHash: head, refName: 'refs/heads/main' }, t, options({ cloneDepth: 1 }));
    expect(sh(t, 'rev-parse', 'HEAD')).toBe(head);
    expect(sh(t, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(readFileSync(path.join(t, '.git', 'shallow'), 'utf8').trim()).toBe(head);
    expect(first).not.toBe(head);
  });

  it('fetches the build ref when no branch holds the commit (a pull request)', async () => {
    const t = target('pull');
    await checkoutJob(url, { jobToken: TOKEN, commitHash: pullCommit, refName: 'refs/pull/1/head' }, t, options());
    expect(sh(t, 'rev-parse', 'HEAD')).toBe(pullCommit);
    expect(readFileSync(path.join(t, 'README'), 'utf8')).toBe('pull\n');
  });

  it('replaces the Git LFS pointers by their objects from the server', async () => {
    const t = target('lfs');
    lines.length = 0;
    await checkoutJob(url, { jobToken: TOKEN, commitHash: head, refName: 'refs/heads/main' }, t, options({ withLfs: true }));
    expect(readFileSync(path.join(t, 'assets', 'big.bin'))).toEqual(LFS_CONTENT);
    expect(statSync(path.join(t, 'assets', 'big.bin')).mode & 0o777).toBe(0o644);
    expect(lines).toEqual([`Fetched 1 Git LFS file (${LFS_CONTENT.length} bytes) from the server`]);
  });

  it('refuses an LFS object that does not match its pointer, leaving the pointer', async () => {
    const t = target('lfs-bad');
    lfsBody = Buffer.from('the large file contenT\n');
    try {
      await expect(checkoutJob(url, { jobToken: TOKEN, commitHash: head, refName: 'refs/heads/main' }, t, options({ withLfs: true }))).rejects.toThrow(
        /does not match its pointer/,
      );
    } finally {
      lfsBody = LFS_CONTENT;
    }
    expect(readFileSync(path.join(t, 'assets', 'big.bin'), 'utf8')).toContain(LFS_OID);
    expect(
      execFileSync('ls', ['-A', path.join(t, 'assets')])
        .toString()
        .trim(),
    ).toBe('big.bin');
  });
});
