import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenProject } from '../helpers/fixtures.js';
import { ADMIN, git, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

/**
 * Repository maintenance after pushes (docs/architecture.md#repository-maintenance): a geometric
 * repack with a multi-pack bitmap and a commit-graph with changed-path filters, leftovers of a
 * killed run removed, and pushes and reads correct while it runs.
 */
describe('repository maintenance', () => {
  let server: TestServer;
  const work: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_MAINTENANCE_DELAY_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
    for (const dir of work) await fs.rm(dir, { recursive: true, force: true });
  });

  /** A work tree with `count` commits on `main`, each changing one of 50 files in 10 directories (made by git fast-import). */
  async function historyOf(count: number): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-maint-'));
    work.push(dir);
    await git(dir, ['init', '-q', '-b', 'main']);
    let stream = '';
    for (let i = 1; i <= count; i++) {
      const content = `line ${i}\n`;
      stream += `commit refs/heads/main\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata 4\nc${String(i).padStart(2, '0').slice(-2)}\n`;
      stream += `M 100644 inline dir${i % 10}/file${i % 50}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`;
    }
    const child = execFile('git', ['fast-import', '--quiet'], { cwd: dir });
    child.stdin!.end(stream);
    await new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import: ${code}`)))));
    await git(dir, ['reset', '-q', '--hard', 'main']);
    return dir;
  }

  const repoOf = (projectId: number) => path.join(server.dataDir, 'repos', `${projectId}.git`);
  const remote = (name: string) => gitUrl(server, name, { name: ADMIN.name, password: ADMIN.password });
  /** Whether the repository has a multi-pack bitmap and a commit-graph chain whose layers carry changed-path filters. */
  async function maintained(repo: string): Promise<boolean> {
    const pack = await fs.readdir(path.join(repo, 'objects', 'pack'));
    if (!pack.some((f) => /^multi-pack-index-[0-9a-f]+\.bitmap$/.test(f))) return false;
    const graphs = path.join(repo, 'objects', 'info', 'commit-graphs');
    let chain: string[];
    try {
      chain = (await fs.readFile(path.join(graphs, 'commit-graph-chain'), 'utf8')).trim().split('\n');
    } catch {
      return false;
    }
    for (const layer of chain) {
      const bytes = await fs.readFile(path.join(graphs, `graph-${layer}.graph`));
      // the chunk ids of the changed-path Bloom filter index and data
      if (!bytes.includes('BIDX') || !bytes.includes('BDAT')) return false;
    }
    return true;
  }

  it('a large push gets a bitmap and a commit-graph with changed-path filters, verified by git', async () => {
    const projectId = await givenProject(server, { name: 'big' });
    const dir = await historyOf(600);
    await git(dir, ['push', '-q', remote('big'), 'main']);
    const repo = repoOf(projectId);
    expect(await eventually(() => maintained(repo), 60_000)).toBe(true);
    await run('git', ['--git-dir', repo, 'commit-graph', 'verify']);
    await run('git', ['--git-dir', repo, 'multi-pack-index', 'verify']);
    await run('git', ['--git-dir', repo, 'fsck', '--no-progress']);
    // the history of a path, as the pages ask it, answers the same as git in the work tree
    const mine = (await git(dir, ['log', '--format=%H', 'main', '--', 'dir3/file13.txt'])).trim();
    const served = await server.call('GET', `/repositories/${projectId}/commits?count=1000&query=${encodeURIComponent('path(dir3/file13.txt)')}`);
    expect(served.status).toBe(200);
    expect(served.json).toEqual(mine.split('\n'));
    expect((await run('git', ['--git-dir', repo, 'log', '--format=%H', 'main', '--', 'dir3/file13.txt'])).stdout.trim()).toBe(mine);
  }, 120_000);

  it('removes what a killed run left, and pushes made while it runs all land intact', async () => {
    const projectId = await givenProject(server, { name: 'busy' });
    const repo = repoOf(projectId);
    const dir = await historyOf(200);
    await git(dir, ['push', '-q', remote('busy'), 'main']);
    expect(await eventually(() => maintained(repo), 60_000)).toBe(true);
    // as a run killed mid-way would leave them
    const stale = [
      path.join(repo, 'objects', 'pack', '.tmp-4242-pack-0123.pack'),
      path.join(repo, 'objects', 'info', 'commit-graphs', 'commit-graph-chain.lock'),
    ];
    for (const file of stale) await fs.writeFile(file, 'left by a killed run');

    // branches pushed one after the other, each push making the repository due at once
    const heads: Record<string, string> = {};
    for (let i = 0; i < 8; i++) {
      await git(dir, ['checkout', '-q', '-B', `topic-${i}`, 'main']);
      for (let j = 0; j < 3; j++) {
        await fs.writeFile(path.join(dir, `topic-${i}.txt`), `change ${j}\n`);
        await git(dir, ['add', '.']);
        await git(dir, ['commit', '-qm', `topic ${i} change ${j}`]);
      }
      heads[`topic-${i}`] = (await git(dir, ['rev-parse', 'HEAD'])).trim();
      await git(dir, ['push', '-q', remote('busy'), `topic-${i}`]);
    }
    const exists = (file: string) =>
      fs.stat(file).then(
        () => true,
        () => false,
      );
    // a run after the last push removed the leftovers and wrote a graph layer holding its head
    const cleaned = async () => {
      for (const file of stale) if (await exists(file)) return false;
      const graphed = await run('git', ['--git-dir', repo, '-c', 'core.commitGraph=true', 'commit-graph', 'verify']).then(
        () => true,
        () => false,
      );
      return graphed && (await maintained(repo));
    };
    expect(await eventually(cleaned, 60_000)).toBe(true);
    await server.settled();
    // every push landed and the repository is whole
    for (const [branch, head] of Object.entries(heads)) {
      expect((await run('git', ['--git-dir', repo, 'rev-parse', `refs/heads/${branch}`])).stdout.trim()).toBe(head);
    }
    await run('git', ['--git-dir', repo, 'fsck', '--no-progress']);
    const clone = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-maint-clone-'));
    work.push(clone);
    await git(clone, ['clone', '-q', remote('busy'), '.']);
    expect((await git(clone, ['rev-parse', 'origin/topic-7'])).trim()).toBe(heads['topic-7']);
  }, 180_000);
});
