import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDirPrivate } from '../../src/data-dir.js';

describe('makeDataDirPrivate', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  it('makes every directory 0700 and every file private, executables 0700', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-data-dir-'));
    dirs.push(dataDir);
    await fs.mkdir(path.join(dataDir, 'repos', 'a.git', 'hooks'), { recursive: true, mode: 0o755 });
    await fs.writeFile(path.join(dataDir, 'repos', 'a.git', 'config'), '', { mode: 0o644 });
    await fs.writeFile(path.join(dataDir, 'repos', 'a.git', 'hooks', 'pre-receive'), '', { mode: 0o755 });
    await makeDataDirPrivate(dataDir);
    const mode = async (rel: string) => (await fs.lstat(path.join(dataDir, rel))).mode & 0o777;
    expect(await mode('repos/a.git/hooks')).toBe(0o700);
    expect(await mode('repos/a.git/config')).toBe(0o600);
    expect(await mode('repos/a.git/hooks/pre-receive')).toBe(0o700);
  });

  it("skips what another process removes during the walk, as a push's quarantine directory", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-data-dir-'));
    dirs.push(dataDir);
    const objects = path.join(dataDir, 'repos', 'a.git', 'objects');
    await fs.mkdir(objects, { recursive: true });
    let churning = true;
    // another process's pushes: quarantine directories made and removed all the time
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        const quarantine = path.join(objects, `tmp_objdir-incoming-${i % 50}`);
        await fs.mkdir(path.join(quarantine, 'pack'), { recursive: true, mode: 0o755 });
        await fs.writeFile(path.join(quarantine, 'pack', 'tmp_pack'), 'x', { mode: 0o644 });
        await fs.rm(path.join(objects, `tmp_objdir-incoming-${(i + 25) % 50}`), { recursive: true, force: true });
      }
    })();
    try {
      for (let i = 0; i < 200; i++) await makeDataDirPrivate(dataDir);
    } finally {
      churning = false;
      await churn;
    }
  });
});
