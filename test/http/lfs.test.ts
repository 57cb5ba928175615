import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, git, gitFails, gitUrl, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';

let server: TestServer;
/** git's environment with a global config in which `git lfs install` set up the LFS filters. */
let lfsEnv: Record<string, string>;
const temps: string[] = [];

async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

beforeAll(async () => {
  server = await startTestServer();
  const home = await tempDir('gitloom-lfs-home-');
  lfsEnv = { HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
  await git(home, ['lfs', 'install', '--skip-repo'], lfsEnv);
});

afterAll(async () => {
  await server.close();
  for (const dir of temps) await fs.rm(dir, { recursive: true, force: true });
});

const lfs = (cwd: string, args: string[]) => git(cwd, args, lfsEnv);
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const pointer = (data: Buffer) => `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(data)}\nsize ${data.length}\n`;

/** A work tree tracking `*.bin` with LFS, holding `files`, committed on main. */
async function lfsWorkTree(files: Record<string, Buffer | string>): Promise<string> {
  const dir = await tempDir('gitloom-lfs-wt-');
  await lfs(dir, ['init', '-q', '-b', 'main']);
  await lfs(dir, ['lfs', 'track', '*.bin']);
  for (const [name, content] of Object.entries(files)) await fs.writeFile(path.join(dir, name), content);
  await lfs(dir, ['add', '-A']);
  await lfs(dir, ['commit', '-q', '-m', 'files']);
  return dir;
}

async function createProject(name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await server.call('POST', '/projects', { body: { name, ...extra } });
  expect(res.status, res.text).toBe(200);
  return res.json as number;
}

describe('Git LFS over HTTP', () => {
  it('pushes and clones LFS files with the git-lfs client', async () => {
    await createProject('media');
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const work = await lfsWorkTree({ 'big.bin': big, 'README.md': '# media\n' });
    await lfs(work, ['push', '-q', gitUrl(server, 'media', ADMIN), 'main']);
    const stored = path.join(server.dataDir, 'lfs', sha256(big).slice(0, 2), sha256(big).slice(2, 4), sha256(big));
    expect((await fs.readFile(stored)).equals(big)).toBe(true);

    const clone = await tempDir('gitloom-lfs-clone-');
    await lfs(clone, ['clone', '-q', gitUrl(server, 'media.git', ADMIN), '.']);
    expect((await fs.readFile(path.join(clone, 'big.bin'))).equals(big)).toBe(true);
  });
});
