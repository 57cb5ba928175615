import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitloomError, NotFound, Unauthorized } from '../../src/errors.js';
import { getDefaultBranch, initBareRepository, listBranches, setDefaultBranch } from '../../src/git/repository.js';
import { gitHttpPlugin } from '../../src/http/routes/git-http.js';
import { clientEnv, git, gitAsync, tempDir, type AsyncRun } from './helpers.js';

const tmp = tempDir('http');
const repo = join(tmp.path, 'repos', '7.git');
const home = join(tmp.path, 'home');
const env = clientEnv(home);
const AUTH = `Basic ${Buffer.from('alice:secret').toString('base64')}`;

let app: FastifyInstance;
let base = '';
const protocols: (string | undefined)[] = [];

async function run(args: string[], cwd?: string): Promise<AsyncRun> {
  return gitAsync(args, { cwd, env });
}

async function ok(args: string[], cwd?: string): Promise<string> {
  const res = await run(args, cwd);
  if (res.code !== 0) throw new Error(`git ${args.join(' ')} failed (${res.code}): ${res.stderr}`);
  return res.stdout.trim();
}

function url(path: string, auth = false): string {
  return auth ? base.replace('http://', 'http://alice:secret@') + path : base + path;
}

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  await initBareRepository(repo);
  app = Fastify();
  app.setErrorHandler((err, _request, reply) => {
    if (err instanceof GitloomError) {
      return reply.code(err.status).type('application/problem+json').send({ title: err.title, status: err.status, detail: err.message });
    }
    return reply.code(500).send({ detail: 'Internal server error' });
  });
  app.addHook('onRequest', async (request) => {
    protocols.push(request.headers['git-protocol'] as string | undefined);
  });
  app.get('/~api/ping', async () => 'pong');
  await app.register(gitHttpPlugin, {
    resolveRepository: async (request, projectPath, access) => {
      if (projectPath !== 'group/app') throw new NotFound('Project not found');
      if (access === 'write' && request.headers.authorization !== AUTH) throw new Unauthorized();
      return { repoPath: repo, projectId: 7 };
    },
  });
  base = (await app.listen({ host: '127.0.0.1', port: 0 })) + '/';
});

afterAll(async () => {
  await app?.close();
  tmp.remove();
});

describe('git smart HTTP', () => {
  it('claims only the smart-HTTP endpoints', async () => {
    expect(await (await fetch(url('~api/ping'))).text()).toBe('pong');
    expect((await fetch(url('~api/x/info/refs?service=git-upload-pack'))).status).toBe(404);
    expect((await fetch(url('group/app/other'))).status).toBe(404);
    expect((await fetch(url('group/other/info/refs?service=git-upload-pack'))).status).toBe(404);
    expect((await fetch(url('group/app/info/refs?service=git-foo'))).status).toBe(400);
    expect((await fetch(url('group/app/info/refs'))).status).toBe(400);
    expect((await fetch(url('group/app/git-upload-pack'), { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect(
      (
        await fetch(url('group/app/git-upload-pack'), {
          method: 'POST',
          body: 'x',
          headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await fetch(url('group/app/git-upload-pack'), {
          method: 'POST',
          body: 'x',
          headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'br' },
        })
      ).status,
    ).toBe(400);

    const ad = await fetch(url('group/app.git/info/refs?service=git-upload-pack'));
    expect(ad.status).toBe(200);
    expect(ad.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    expect(ad.headers.get('cache-control')).toContain('no-cache');
    expect((await ad.text()).startsWith('001e# service=git-upload-pack\n0000')).toBe(true);

    const push = await fetch(url('group/app/info/refs?service=git-receive-pack'));
    expect(push.status).toBe(401);
    expect(push.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
  });

  it('refuses a push without credentials', async () => {
    const work = join(tmp.path, 'anon');
    await ok(['init', '-q', '-b', 'main', work]);
    writeFileSync(join(work, 'a.txt'), 'anonymous\n');
    await ok(['add', '.'], work);
    await ok(['commit', '-qm', 'anon'], work);
    const res = await run(['push', url('group/app.git'), 'main'], work);
    expect(res.code).not.toBe(0);
    expect(await listBranches(repo)).toEqual([]);
  });

  // what a push changed is the hooks' and the journal's (test/http/ref-journal.test.ts)
  it('accepts pushes and serves clones and fetches', async () => {
    const work = join(tmp.path, 'work');
    await ok(['init', '-q', '-b', 'feature', work]);
    writeFileSync(join(work, 'readme.md'), 'hello\n');
    await ok(['add', '.'], work);
    await ok(['commit', '-qm', 'first'], work);
    await ok(['checkout', '-qb', 'main'], work);
    writeFileSync(join(work, 'readme.md'), 'hello main\n');
    await ok(['commit', '-qam', 'second'], work);
    const mainHash = await ok(['rev-parse', 'main'], work);
    const featureHash = await ok(['rev-parse', 'feature'], work);

    await ok(['push', url('group/app', true), 'main', 'feature'], work);
    expect(git(repo, ['rev-parse', 'refs/heads/main', 'refs/heads/feature'])).toBe(`${mainHash}\n${featureHash}`);
    await setDefaultBranch(repo, 'main');

    // clone with and without .git, protocol v2 and v0
    for (const [name, path, version] of [
      ['clone-v2', 'group/app.git', '2'],
      ['clone-v0', 'group/app', '0'],
    ] as const) {
      protocols.length = 0;
      const dir = join(tmp.path, name);
      await ok(['-c', `protocol.version=${version}`, 'clone', '-q', url(path), dir]);
      expect(await ok(['symbolic-ref', 'HEAD'], dir)).toBe('refs/heads/main');
      expect(await ok(['rev-parse', 'HEAD', 'origin/feature'], dir)).toBe(`${mainHash}\n${featureHash}`);
      if (version === '2') expect(protocols).toContain('version=2');
      else expect(protocols.every((p) => p === undefined)).toBe(true);
    }

    // a new commit and a deleted branch, then fetches over both protocols
    writeFileSync(join(work, 'next.txt'), 'next\n');
    await ok(['add', '.'], work);
    await ok(['commit', '-qm', 'third'], work);
    const third = await ok(['rev-parse', 'HEAD'], work);
    await ok(['push', url('group/app.git', true), 'main', ':feature'], work);
    expect((await listBranches(repo)).map((b) => [b.name, b.commitHash])).toEqual([['main', third]]);
    expect(await getDefaultBranch(repo)).toBe('main');
    for (const [name, version] of [
      ['clone-v2', '2'],
      ['clone-v0', '0'],
    ] as const) {
      const dir = join(tmp.path, name);
      await ok(['-c', `protocol.version=${version}`, 'fetch', '-q', '--prune', 'origin'], dir);
      expect(await ok(['rev-parse', 'origin/main'], dir)).toBe(third);
      expect((await run(['rev-parse', '--verify', '-q', 'origin/feature'], dir)).code).not.toBe(0);
    }
  });

  it('decompresses gzip request bodies as a stream', async () => {
    const head = git(repo, ['rev-parse', 'refs/heads/main']);
    const pkt = (line: string): string => (line.length + 4).toString(16).padStart(4, '0') + line;
    const request = gzipSync(pkt(`want ${head} ofs-delta\n`) + '0000' + pkt('done\n'));
    const res = await fetch(url('group/app/git-upload-pack'), {
      method: 'POST',
      body: request,
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(body.subarray(8, 12).toString()).toBe('PACK');
  });

  it('streams a large push', async () => {
    const work = join(tmp.path, 'work');
    writeFileSync(join(work, 'big.bin'), randomBytes(20 * 1024 * 1024));
    await ok(['add', 'big.bin'], work);
    await ok(['commit', '-qm', 'big'], work);
    const head = await ok(['rev-parse', 'HEAD'], work);
    await ok(['push', url('group/app', true), 'main'], work);
    expect(git(repo, ['rev-parse', 'refs/heads/main'])).toBe(head);
    expect(git(repo, ['cat-file', '-s', `${head}:big.bin`])).toBe(String(20 * 1024 * 1024));

    const dir = join(tmp.path, 'clone-big');
    await ok(['clone', '-q', '--bare', url('group/app'), dir]);
    expect(await ok(['--git-dir=' + dir, 'rev-parse', 'main'])).toBe(head);
  }, 60_000);
});
