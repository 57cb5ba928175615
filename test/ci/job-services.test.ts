import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import { JOB_DIR_LABEL, type ContainerEngine } from '../../src/ci/container-engine.js';
import { runJob } from '../../src/ci/executor.js';
import { DEFAULT_JOB_SANDBOX } from '../../src/ci/sandbox.js';
import { testEngine } from '../helpers/images.js';

let tmp: string;
let engine: ContainerEngine;
let images: Awaited<ReturnType<typeof testEngine>>;
let caseNo = 0;
const IMAGE = 'localhost/gitloom-test/services:1';

const SERVICES = `services:
- name: web
  image: ${IMAGE}
  arguments: sh -c 'echo "greeting $GREETING" > /www/greeting.txt && exec httpd -f -p 8080 -h /www'
  envVars:
  - name: GREETING
    value: hello from @project_name@
  readinessCheckCommand: wget -q -O /dev/null http://127.0.0.1:8080/index.html
- name: broken
  image: ${IMAGE}
  arguments: sh -c 'echo "bad configuration"; exit 3'
  readinessCheckCommand: 'false'
`;

async function exec(
  required: string[],
  commands: string[],
  network: 'outward' | 'none' = 'outward',
): Promise<{ status: string; lines: string[]; jobDir: string }> {
  const lines: string[] = [];
  const jobDir = path.join(tmp, 'jobs', `job-${++caseNo}`);
  const spec = parseBuildSpec(
    `version: 25\n${SERVICES}jobs:\n- name: J\n  requiredServices: [${required.join(', ')}]\n  steps:\n  - !CommandStep\n    name: probe\n    image: ${IMAGE}\n    interpreter: !DefaultInterpreter\n      commands:\n${commands.map((c) => `      - ${JSON.stringify(c)}\n`).join('')}`,
  );
  const job = spec.jobs[0];
  const result = await runJob({
    jobDir,
    steps: job.steps,
    services: job.services,
    checkout: () => Promise.reject(new Error('no checkout')),
    artifactsDir: path.join(tmp, `artifacts-${caseNo}`),
    log: (l) => lines.push(l),
    killGraceMs: 500,
    containers: { get: () => Promise.resolve(engine) },
    sandbox: { ...DEFAULT_JOB_SANDBOX, network },
    variables: { projectName: 'demo', projectPath: 'demo', jobName: 'J', ref: 'refs/heads/main', commitHash: '0'.repeat(40), buildNumber: caseNo },
  });
  return { status: result.status, lines, jobDir };
}

const left = (jobDir: string) => engine.docker.listContainers({ all: true, filters: { label: [`${JOB_DIR_LABEL}=${jobDir}`] } });

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-services-'));
  await chmod(tmp, 0o711);
  images = await testEngine({ [IMAGE]: { osName: 'Services', files: { 'www/index.html': 'served by the web service\n' } } });
  engine = images.engine;
}, 120_000);

afterAll(async () => {
  await images?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('job services', () => {
  it('starts a required service before the steps, reachable by its name, and removes it with the job', async () => {
    const { status, lines, jobDir } = await exec(['web'], ['wget -q -O- http://web:8080/index.html', 'wget -q -O- http://web:8080/greeting.txt']);
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    expect(lines).toContain("Service 'web' is ready");
    expect(lines).toContain('served by the web service');
    expect(lines).toContain('greeting hello from demo');
    expect(await left(jobDir)).toEqual([]);
  }, 120_000);

  it('shares a loopback of the job with the steps when the job network is none', async () => {
    const { status, lines } = await exec(['web'], ['wget -q -O- http://web:8080/index.html'], 'none');
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    expect(lines).toContain('served by the web service');
  }, 120_000);

  it('fails the job before its steps when a service exits before it is ready, with the tail of its log', async () => {
    const { status, lines, jobDir } = await exec(['web', 'broken'], ['echo step ran']);
    expect(status).toBe('FAILED');
    expect(lines).toContain("Service 'broken' exited with code 3 before it was ready; its log ends:\nbad configuration");
    expect(lines).not.toContain('step ran');
    expect(await left(jobDir)).toEqual([]);
  }, 120_000);
});
