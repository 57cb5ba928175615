import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, startInProcessServer } from '../bench/lib.js';
const bench = await startInProcessServer('incr', 'pw-secret');
const db = bench.server.services.db;
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'incr-'));
const url = new URL(`${bench.server.url}/p`); url.username='admin'; url.password='pw-secret';
await fetch(`${bench.server.url}/~api/projects`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('admin:pw-secret').toString('base64')}`, 'content-type': 'application/json' }, body: '{"name":"p"}' });
await git(work, ['init', '-q', '-b', 'main']);
await fs.writeFile(path.join(work, 'a.ts'), 'x\n');
await git(work, ['add', '-A']); await git(work, ['commit', '-q', '-m', 'a']);
await git(work, ['push', '-q', url.toString(), 'main']);
await new Promise((r) => setTimeout(r, 3000));
for (let round = 0; round < 3; round++) {
  await fs.writeFile(path.join(work, 'a.ts'), `x${round}\n`);
  await git(work, ['commit', '-q', '-am', 'b']);
  const t0 = performance.now();
  await git(work, ['push', '-q', url.toString(), 'main']);
  const t1 = performance.now();
  let stale = 0, indexed = 0;
  for (;;) {
    const row = await db.selectFrom('codeSearchProjects').selectAll().executeTakeFirst();
    const j = await db.selectFrom('refJournal').select(['id']).orderBy('id', 'desc').executeTakeFirst();
    if (!stale && row?.staleDate && row.staleDate > Date.now() - 60000) stale = performance.now();
    if (stale && row?.staleDate === null) { indexed = performance.now(); break; }
    await new Promise((r) => setTimeout(r, 5));
  }
  console.log(`push ${(t1 - t0).toFixed(0)} ms, stale after ${(stale - t1).toFixed(0)} ms, indexed after ${(indexed - t1).toFixed(0)} ms`);
}
await bench.close();
