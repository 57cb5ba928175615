/**
 * CI figures, on demand: `npx tsx bench/ci.ts` (BENCH_BYTES sets the artifact size, default 1 GiB).
 * The server runs as its own process (`node dist/cli.js serve`, as `npm start` runs it) and the
 * transfers use curl, so the figures are the server's:
 * - push-to-RUNNING latency of a branch-update-triggered job (target < 500 ms);
 * - artifact upload and download throughput vs `cp` on the same disk (ratio, target ≥ 0.7);
 * - server RSS during the transfers (target < 200 MB);
 * - the job sandbox's start-up cost per command step (target < 20 ms): the same job of trivial
 *   steps run by the executor unconfined, then in bubblewrap without and with outward network;
 * - container steps (a Podman service of the bench's own, an image built offline): the cost per
 *   step (target < 150 ms) and per job (the job's network namespace, target < 500 ms) beside the
 *   bubblewrap figures, and the check of an image the engine has (target < 100 ms).
 * The same two curl transfers against a bare node:http server that only streams the body to or
 * from a file (1 MiB chunks) give the ceiling of HTTP over loopback on the machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseBuildSpec } from '../src/ci/build-spec.js';
import { runJob } from '../src/ci/executor.js';
import type { ContainerEngine } from '../src/ci/container-engine.js';
import { DEFAULT_JOB_SANDBOX, type JobNetwork } from '../src/ci/sandbox.js';
import { testEngine } from '../test/helpers/images.js';
import { bareTransfer, build, cpTime, curlTransfer, git, report, samplePeakRss, startBenchServer, time } from './lib.js';

const SIZE = Number(process.env.BENCH_BYTES ?? 1024 ** 3);

const SPEC = `version: 25
jobs:
- name: CI
  steps:
  - !CommandStep
    name: s
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - sleep 1
  triggers:
  - !BranchUpdateTrigger {}
`;

/**
 * Milliseconds per step of a job of `steps` trivial command steps (median of 3 runs): on the
 * server, or in containers of `image` when an engine is given.
 */
async function perStep(
  sandbox: { enabled: boolean; network?: JobNetwork },
  steps: number,
  containers?: { engine: ContainerEngine; image: string },
): Promise<number> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-sandbox-'));
  await fs.chmod(dir, 0o711);
  const yaml = Array.from(
    { length: steps },
    (_, i) =>
      `  - !CommandStep\n    name: s${i}\n    ${containers ? `image: ${containers.image}` : 'runInContainer: false'}\n    interpreter: !DefaultInterpreter\n      commands: |\n        true\n`,
  ).join('');
  const jobSteps = parseBuildSpec(`version: 25\njobs:\n- name: J\n  steps:\n${yaml}`).jobs[0].steps;
  const times: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const jobDir = path.join(dir, `job-${i}`);
      times.push(
        await time(async () => {
          const result = await runJob({
            jobDir,
            steps: jobSteps,
            artifactsDir: path.join(dir, 'artifacts'),
            log: () => undefined,
            checkout: async () => undefined,
            sandbox: { ...DEFAULT_JOB_SANDBOX, enabled: sandbox.enabled, network: sandbox.network ?? null },
            ...(containers && { containers: { get: () => Promise.resolve(containers.engine) } }),
          });
          if (result.status !== 'SUCCESSFUL') throw new Error(`bench job ended ${result.status}`);
        }),
      );
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  return times.sort((a, b) => a - b)[1] / steps;
}

const STEPS = 20;
const unconfined = await perStep({ enabled: false }, STEPS);
const isolated = await perStep({ enabled: true, network: 'none' }, STEPS);
const outward = await perStep({ enabled: true, network: 'outward' }, STEPS);
report('command step, unconfined', `${unconfined.toFixed(1)} ms`, '');
report('sandbox start-up per step, network none', `${(isolated - unconfined).toFixed(1)} ms`, '< 20 ms');
report('sandbox start-up per step, outward network (slirp4netns, nftables)', `${(outward - unconfined).toFixed(1)} ms`, '< 20 ms');

const images = await testEngine({ 'localhost/gitloom-bench/busybox:1': { osName: 'Bench' } });
try {
  const containers = { engine: images.engine, image: 'localhost/gitloom-bench/busybox:1' };
  await perStep({ enabled: true, network: 'outward' }, 1, containers); // the image's first use maps its layers to job uids
  const inContainers = await perStep({ enabled: true, network: 'outward' }, STEPS, containers);
  const oneStepJob = await perStep({ enabled: true, network: 'outward' }, 1, containers);
  const present = await time(() => images.engine.ensureImage(containers.image, { project: null, logins: [] }, () => undefined, new AbortController().signal));
  report('container start-up per step, outward network', `${(inContainers - unconfined).toFixed(1)} ms`, '< 150 ms');
  report('container step vs bubblewrap step (ratio)', (inContainers / outward).toFixed(1), '');
  report('container job start-up (network namespace, first container)', `${(oneStepJob - inContainers).toFixed(1)} ms`, '< 500 ms');
  report('image check of a present image', `${present.toFixed(1)} ms`, '< 100 ms');
} finally {
  await images.close();
}

await build();
const server = await startBenchServer(6721);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-ci-'));
try {
  const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  await fetch(`${server.url}/~api/projects`, { method: 'POST', headers, body: '{"name":"bench"}' });
  const work = path.join(dir, 'work');
  await fs.mkdir(work);
  await git(work, ['init', '-q', '-b', 'main']);
  await fs.writeFile(path.join(work, '.onedev-buildspec.yml'), SPEC);
  await git(work, ['add', '-A']);
  await git(work, ['commit', '-q', '-m', 'build spec']);
  const pushStart = Date.now();
  await git(work, ['push', '-q', `http://admin:${server.token}@127.0.0.1:6721/bench`, 'main']);
  const pushEnd = Date.now();
  let buildId = 0;
  let runningAt = 0;
  while (Date.now() - pushStart < 20_000 && !runningAt) {
    const builds = (await (await fetch(`${server.url}/~api/builds?query=running&count=1`, { headers })).json()) as { id: number; runningDate: string }[];
    if (builds.length > 0) {
      buildId = builds[0].id;
      runningAt = Date.parse(builds[0].runningDate);
    } else await new Promise((r) => setTimeout(r, 5));
  }
  report('push to RUNNING (push included)', `${runningAt - pushStart} ms`, '< 500 ms');
  report('push finished to RUNNING', `${runningAt - pushEnd} ms`, '');

  const source = path.join(dir, 'big.bin');
  execFileSync('dd', ['if=/dev/urandom', `of=${source}`, 'bs=1M', `count=${Math.round(SIZE / 1024 ** 2)}`], { stdio: 'ignore' });
  const cpMs = await cpTime(source, dir);
  const stopSampling = samplePeakRss(server.process.pid!);
  const auth = { authorization: `Bearer ${server.token}` };
  const gitloom = await curlTransfer(
    dir,
    source,
    { url: `${server.url}/~api/artifacts/${buildId}/big.bin`, headers: auth, method: 'POST' },
    { url: `${server.url}/~api/artifacts/${buildId}/contents/big.bin`, headers: auth },
  ).finally(stopSampling);
  const peak = stopSampling();
  const ceiling = await bareTransfer(dir, source, 6722);

  const mb = SIZE / 1024 ** 2;
  const rate = (ms: number) => `${(mb / (ms / 1000)).toFixed(0)} MB/s`;
  report('cp', rate(cpMs), '');
  report('artifact upload', rate(gitloom.up), '');
  report('upload ratio vs cp', (cpMs / gitloom.up).toFixed(2), '≥ 0.7');
  report('artifact download', rate(gitloom.down), '');
  report('download ratio vs cp', (cpMs / gitloom.down).toFixed(2), '≥ 0.7');
  report('bare node:http upload / download (ceiling)', `${rate(ceiling.up)} / ${rate(ceiling.down)}`, '');
  report('ceiling ratio vs cp: upload / download', `${(cpMs / ceiling.up).toFixed(2)} / ${(cpMs / ceiling.down).toFixed(2)}`, '');
  report('Gitloom vs ceiling: upload / download', `${(ceiling.up / gitloom.up).toFixed(2)} / ${(ceiling.down / gitloom.down).toFixed(2)}`, '');
  report('server peak RSS during transfers', `${peak.toFixed(0)} MiB`, '< 200 MiB');
} finally {
  await server.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
