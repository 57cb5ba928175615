import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/command.js';
import { freshClone, givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The value of one sample of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('health and metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_METRICS_TOKEN: 'scrape-me' });
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('answers liveness and readiness without credentials, even bad ones', async () => {
    const live = await fetch(`${server.url}/~health/live`, { headers: { authorization: 'Bearer nonsense' } });
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'UP' });
    const ready = await fetch(`${server.url}/~health/ready`);
    expect(ready.status).toBe(200);
    const body = await ready.json();
    expect(body.status).toBe('UP');
    expect(Object.keys(body.checks)).toEqual(['database', 'dataDir', 'migrations', 'journal', 'outbox']);
    expect(body.checks.journal.detail).toMatch(/^lag \d+ s$/);
    for (const check of Object.values(body.checks) as { ok: boolean }[]) expect(check.ok).toBe(true);
  });

  it('restricts metrics to administrators or the bearer token', async () => {
    expect((await fetch(`${server.url}/~metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/~metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const bob = await server.createUser('bob');
    const denied = await fetch(`${server.url}/~metrics`, { headers: { authorization: bob.auth } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toContain('application/problem+json');
    const byToken = await fetch(`${server.url}/~metrics`, { headers: { authorization: 'Bearer scrape-me' } });
    expect(byToken.status).toBe(200);
    expect(byToken.headers.get('content-type')).toContain('text/plain');
  });

  it('counts requests by route pattern, git commands and bytes, builds, outbox and pool', async () => {
    const repo = await givenRepo(server, 'metered');
    for (let i = 0; i < 3; i++) expect((await server.call('GET', `/projects/${repo.id}`)).status).toBe(200);
    await freshClone(server, 'metered');
    const scrape = await fetch(`${server.url}/~metrics`, { headers: { authorization: 'Bearer scrape-me' } });
    const text = await scrape.text();
    expect(sample(text, 'gitloom_http_requests_total', { method: 'GET', route: '/~api/projects/:projectId', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(text).not.toContain(`route="/~api/projects/${repo.id}"`);
    expect(sample(text, 'gitloom_http_request_duration_seconds_count', { route: '/~api/projects/:projectId' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'gitloom_git_commands_total', { command: 'receive-pack', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'gitloom_git_command_duration_seconds_count', { command: 'upload-pack' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'gitloom_git_transfer_bytes_total', { direction: 'push' })).toBeGreaterThan(100);
    expect(sample(text, 'gitloom_git_transfer_bytes_total', { direction: 'fetch' })).toBeGreaterThan(100);
    expect(sample(text, 'gitloom_builds', { status: 'RUNNING' })).toBe(0);
    expect(sample(text, 'gitloom_outbox_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'gitloom_journal_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'gitloom_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE gitloom_build_duration_seconds histogram');
    expect(text).toContain('gitloom_process_cpu_seconds_total');
  });
});

describe('git environment', () => {
  let server: TestServer;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_GIT_SLOW_MS: '0' }, { logDestination: { write: (line: string) => lines.push(JSON.parse(line)) } });
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('keeps git HOME and global config in the data dir and logs slow commands', async () => {
    await writeFile(path.join(server.dataDir, 'git', '.gitconfig'), '[user]\n\tname = Loom Keeper\n');
    expect((await gitText(['config', '--global', 'user.name'])).trim()).toBe('Loom Keeper');
    expect(await gitText(['var', 'GIT_COMMITTER_IDENT'], { env: { GIT_COMMITTER_EMAIL: 'k@example.com' } })).toMatch(/^Loom Keeper <k@example.com>/);
    await givenRepo(server, 'watched');
    await freshClone(server, 'watched');
    const slow = lines.filter((line) => line.msg === 'slow git command');
    expect(slow.some((line) => (line.git as string[]).includes('upload-pack') && typeof line.ms === 'number')).toBe(true);
    expect(slow.some((line) => (line.git as string[]).includes('receive-pack'))).toBe(true);
  });
});
