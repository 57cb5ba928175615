import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { commandSpec, eventually } from '../helpers/fixtures.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { callChild, commitFiles, git, givenInstallation, killChild, makeWorkTree, remoteOf, serveChild, type ChildServer } from '../helpers/server.js';

const run = promisify(execFile);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether `a` is an ancestor of (or equal to) `b` in a bare repository. */
async function contains(repo: string, b: string, a: string): Promise<boolean> {
  return run('git', ['--git-dir', repo, 'merge-base', '--is-ancestor', a, b]).then(
    () => true,
    () => false,
  );
}

async function headOf(repo: string, branch: string): Promise<string | null> {
  return run('git', ['--git-dir', repo, 'rev-parse', '--verify', '-q', `refs/heads/${branch}`]).then(
    (r) => r.stdout.trim(),
    () => null,
  );
}

/**
 * What must hold after any crash: every request whose target contains its source head is MERGED,
 * every open request's latest update is its source head, no request in error, git fsck clean, no
 * build RUNNING, every journal entry processed.
 */
async function assertRecovered(server: ChildServer, repo: string, project: number): Promise<void> {
  const requests = (await callChild(server, 'GET', '/pulls?count=100')).json as any[];
  expect(requests.length).toBeGreaterThan(0);
  for (const pr of requests) {
    const source = await headOf(repo, pr.sourceBranch);
    const main = (await headOf(repo, 'main'))!;
    const latest = async () => ((await callChild(server, 'GET', `/pulls/${pr.id}/updates`)).json as any[]).at(-1)?.headCommitHash;
    if (source !== null && (await contains(repo, main, source))) {
      expect(await eventually(async () => (await callChild(server, 'GET', `/pulls/${pr.id}`)).json.status === 'MERGED', 30_000), `#${pr.number}`).toBe(true);
    } else if ((await callChild(server, 'GET', `/pulls/${pr.id}`)).json.status === 'MERGED') {
      // merged before its last push was reacted to: the target has what was merged
      expect(await contains(repo, main, await latest()), `#${pr.number}`).toBe(true);
    } else {
      expect((await callChild(server, 'GET', `/pulls/${pr.id}`)).json.status, `#${pr.number}`).toBe('OPEN');
      await eventually(async () => (await latest()) === source, 30_000);
      expect(await latest(), `#${pr.number} shows the last push`).toBe(source);
    }
    expect((await callChild(server, 'GET', `/pulls/${pr.id}`)).json.checkError, `#${pr.number}`).toBeNull();
  }
  const builds = (await callChild(server, 'GET', `/builds?count=100`)).json as any[];
  expect(builds.filter((b) => b.status === 'RUNNING')).toEqual([]);
  const fsck = await run('git', ['--git-dir', repo, 'fsck', '--no-progress']);
  expect(fsck.stderr.replace(/^(dangling|Checking).*\n?/gm, '')).toBe('');
  void project;
}

describe('crash recovery: kill -9 during merges and right after pushes', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  async function givenProject(server: ChildServer, work: string): Promise<{ id: number; repo: string; remote: string }> {
    const id = (await callChild(server, 'POST', '/projects', { name: 'crash' })).json as number;
    const remote = remoteOf(server, 'crash');
    await git(work, ['push', '-q', remote, 'main']);
    return { id, repo: '', remote };
  }

  async function openRequest(server: ChildServer, project: number, branch: string): Promise<number> {
    const res = await callChild(server, 'POST', '/pulls', {
      targetProjectId: project,
      sourceProjectId: project,
      targetBranch: 'main',
      sourceBranch: branch,
      title: branch,
      mergeStrategy: 'CREATE_MERGE_COMMIT',
    });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  }

  it('finishes a merge killed between the target ref move and the status change', async () => {
    const env = await givenInstallation(cleanup);
    const work = await makeWorkTree({ 'a.txt': 'a\n' });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const first = await serveChild({ ...env, GITLOOM_FAULT_POINT: 'merge-ref-moved' });
    cleanup.push(() => killChild(first));
    const project = await givenProject(first, work);
    const repo = path.join(env.GITLOOM_DATA_DIR, 'repos', `${project.id}.git`);
    await git(work, ['checkout', '-q', '-b', 'topic']);
    const head = await commitFiles(work, { 'b.txt': 'b\n' }, 'topic');
    await git(work, ['push', '-q', project.remote, 'topic']);
    const request = await openRequest(first, project.id, 'topic');

    // the process dies inside the merge: the target moved, the request is still OPEN in the database
    await expect(callChild(first, 'POST', `/pulls/${request}/merge`, 'Merge it')).rejects.toThrow();
    await new Promise((resolve) => (first.child.exitCode !== null || first.child.signalCode !== null ? resolve(null) : first.child.once('exit', resolve)));
    expect(first.child.signalCode).toBe('SIGKILL');
    const main = (await headOf(repo, 'main'))!;
    expect(await contains(repo, main, head)).toBe(true);

    const second = await serveChild(env);
    cleanup.push(() => killChild(second));
    // SQLite: repaired at start-up; PostgreSQL (other processes may be mid-merge): once the intent
    // is a few seconds old and no live process holds it
    const status = async () => (await callChild(second, 'GET', `/pulls/${request}`)).json.status;
    await eventually(async () => (await status()) === 'MERGED', 30_000);
    expect(await status()).toBe('MERGED');
    const changes = (await callChild(second, 'GET', `/pulls/${request}/changes`)).json as any[];
    const merged = changes.filter((c) => c.data['@type'] === 'PullRequestMergeData');
    // finished once, by its merger, with the merge's own message commit
    expect(merged).toHaveLength(1);
    expect(merged[0].userId).toBe(1);
    expect(merged[0].data.reason).toBeNull();
    expect(await run('git', ['--git-dir', repo, 'log', '-1', '--format=%B', 'main']).then((r) => r.stdout.trim())).toBe('Merge it');
    // a second merge is refused; the branch can still be worked on
    expect((await callChild(second, 'POST', `/pulls/${request}/merge`, '')).status).toBe(409);
    await assertRecovered(second, repo, project.id);
  }, 90_000);

  it('a build whose finish was cut off inside its transaction ends once, with one BUILD event', async () => {
    const receiver = await startHttpReceiver();
    cleanup.push(() => receiver.close());
    const env = await givenInstallation(cleanup, { GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true', GITLOOM_OUTBOX_BACKOFF_MS: '50' });
    const work = await makeWorkTree({ '.onedev-buildspec.yml': commandSpec({ name: 'Slow', commands: ['sleep 60'] }) });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const first = await serveChild({ ...env, GITLOOM_FAULT_POINT: 'build-finish-written' });
    cleanup.push(() => killChild(first));
    const project = await givenProject(first, work);
    const setting = (await callChild(first, 'GET', `/projects/${project.id}/setting`)).json;
    expect(
      (
        await callChild(first, 'POST', `/projects/${project.id}/setting`, {
          ...setting,
          webHooks: [{ postUrl: `${receiver.url}/hook`, eventTypes: ['BUILD'], secret: 'k' }],
        })
      ).status,
    ).toBe(200);
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    const build = await callChild(first, 'POST', '/job-runs', {
      '@type': 'JobRunOnCommit',
      projectId: project.id,
      commitHash: head,
      refName: 'refs/heads/main',
      jobName: 'Slow',
      params: {},
      reason: 'crash',
    });
    expect(build.status, build.text).toBe(200);
    await eventually(async () => (await callChild(first, 'GET', `/builds/${build.json}`)).json.status === 'RUNNING', 30_000);

    // the cancel kills the process between the status update and the event, before the commit
    await expect(callChild(first, 'DELETE', `/job-runs/${build.json}`)).rejects.toThrow();
    await new Promise((resolve) => (first.child.exitCode !== null || first.child.signalCode !== null ? resolve(null) : first.child.once('exit', resolve)));
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await serveChild(env);
    cleanup.push(() => killChild(second));
    const finished = async () => receiver.received.map((r) => JSON.parse(r.body).build).filter((b) => b.id === build.json && b.finishDate);
    await eventually(async () => (await finished()).length > 0, 60_000);
    const final = (await callChild(second, 'GET', `/builds/${build.json}`)).json;
    expect(['FAILED', 'CANCELLED']).toContain(final.status);
    await sleep(500);
    expect((await finished()).map((b) => b.status)).toEqual([final.status]);
  }, 120_000);

  it('keeps every push and merge across repeated kill -9 at varied delays', async () => {
    const env = await givenInstallation(cleanup);
    const work = await makeWorkTree({ 'a.txt': 'a\n' });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    let server = await serveChild(env);
    cleanup.push(() => killChild(server));
    const project = await givenProject(server, work);
    const repo = path.join(env.GITLOOM_DATA_DIR, 'repos', `${project.id}.git`);
    const requests: { id: number; branch: string }[] = [];
    const delays = [0, 20, 60, 120];
    for (let round = 0; round < delays.length; round++) {
      const branch = `topic-${round}`;
      await git(work, ['checkout', '-q', '-B', branch, 'main']);
      await commitFiles(work, { [`${branch}.txt`]: '1\n' }, `${branch} 1`);
      await git(work, ['push', '-q', '-f', remoteOf(server, 'crash'), branch]);
      requests.push({ id: await openRequest(server, project.id, branch), branch });
      // push again and kill right after the push returned
      await commitFiles(work, { [`${branch}.txt`]: '2\n' }, `${branch} 2`);
      await git(work, ['push', '-q', '-f', remoteOf(server, 'crash'), branch]);
      // and, every other round, merge an earlier request while the server is killed
      const victim = round % 2 === 1 ? requests[round - 1] : null;
      // the connection may be cut by the kill (fetch rejects with a TypeError); any other fault surfaces
      const merging = victim
        ? callChild(server, 'POST', `/pulls/${victim.id}/merge`, '').catch((error: unknown) => {
            if (!(error instanceof TypeError)) throw error;
            return null;
          })
        : Promise.resolve(null);
      await sleep(delays[round]);
      await killChild(server);
      await merging;
      server = await serveChild(env);
      await git(work, ['checkout', '-q', 'main']);
    }
    await assertRecovered(server, repo, project.id);
  }, 180_000);
});
