import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
const ex = promisify(execFile);
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-'));
const config = loadConfig({ ...process.env, GITLOOM_DATA_DIR: path.join(dir, 'data'), GITLOOM_PORT: '6901', GITLOOM_INITIAL_PASSWORD: 'secret-pw', GITLOOM_SSH_PORT: '0', GITLOOM_SSH_ENABLED: 'false' });
const server = await startServer(config, { logger: false });
const url = server.url;
const auth = 'Basic ' + Buffer.from('admin:secret-pw').toString('base64');
const call = async (method: string, route: string, body?: string, type = 'application/json') => {
  const res = await fetch(`${url}/~api${route}`, { method, headers: { authorization: auth, 'content-type': type }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
};
const projectId = await call('POST', '/projects', JSON.stringify({ name: 'bench' }));
const repo = path.join(config.dataDir, 'repos', `${projectId}.git`);
const parts: string[] = [];
for (let i = 1; i <= 5000; i++) {
  const content = `line ${i}`, message = `commit ${i}`;
  parts.push('commit refs/heads/main', `mark :${i}`, `committer B <b@e.com> ${1_700_000_000 + i} +0000`, `data ${message.length}`, message, ...(i > 1 ? [`from :${i - 1}`] : []), `M 100644 inline src/file${i % 200}.txt`, `data ${content.length}`, content, '');
}
spawnSync('git', [`--git-dir=${repo}`, 'fast-import', '--quiet'], { input: parts.join('\n') + '\n' });
const work = path.join(dir, 'work');
const remote = `http://admin:secret-pw@127.0.0.1:6901/bench`;
await ex('git', ['clone', '-q', remote, work]);
const g = async (...a: string[]) => (await ex('git', a, { cwd: work, env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' } })).stdout;
const times: number[] = [];
for (let i = 0; i < 15; i++) {
  await g('fetch', '-q', 'origin');
  await g('checkout', '-q', '-B', `b${i}`, 'origin/main~5');
  for (const n of [1, 2]) { fs.writeFileSync(path.join(work, `f-${i}.txt`), `${n}\n`); await g('add', '-A'); await g('commit', '-q', '-m', `p${n}`); }
  await g('push', '-q', remote, `b${i}`);
  const id = await call('POST', '/pulls', JSON.stringify({ targetProjectId: projectId, sourceProjectId: projectId, targetBranch: 'main', sourceBranch: `b${i}`, title: `t${i}`, mergeStrategy: 'CREATE_MERGE_COMMIT' }));
  await call('GET', `/pulls/${id}/merge-preview`);
  const t = performance.now();
  await call('POST', `/pulls/${id}/merge`, `Merge ${i}`, 'text/plain');
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log('merge p50', times[Math.floor(times.length / 2)].toFixed(1), 'all', times.map((t) => t.toFixed(0)).join(' '));
await server.close();
