import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import { runJob, type CheckoutFn, type RunJobOptions } from '../../src/ci/executor.js';
import type { Step } from '../../src/ci/spec-types.js';
import { processesWith, waitGone } from '../helpers/processes.js';

const run = promisify(execFile);
let tmp: string;
let repo: string;
let jobDir: string;
let workspace: string;
let artifactsDir: string;
let caseNo = 0;

/** Checkout implemented with the git CLI: clone the test repository into the target dir. */
const gitCheckout: CheckoutFn = async (target, opts) => {
  const args = ['clone', '--quiet'];
  if (opts.cloneDepth !== null) args.push('--depth', String(opts.cloneDepth));
  args.push('--', `file://${repo}`, target);
  await run('git', args, { signal: opts.signal, env: { PATH: process.env.PATH, GIT_TERMINAL_PROMPT: '0' } });
  opts.log('Checked out');
};

const stepsOf = (yamlSteps: string, extra = ''): readonly Step[] =>
  parseBuildSpec(`version: 25\njobs:\n- name: J\n  steps:\n${yamlSteps}${extra}`).jobs[0].steps;

const cmd = (name: string, commands: string, more = ''): string =>
  `  - !CommandStep\n    name: ${name}\n    runInContainer: false\n    interpreter: !DefaultInterpreter\n      commands: |\n${commands
    .split('\n')
    .map((l) => `        ${l}`)
    .join('\n')}\n${more}`;

async function exec(steps: readonly Step[], extra: Partial<RunJobOptions> = {}): Promise<{ result: Awaited<ReturnType<typeof runJob>>; lines: string[] }> {
  const lines: string[] = [];
  const result = await runJob({ jobDir, steps, checkout: gitCheckout, artifactsDir, log: (l) => lines.push(l), killGraceMs: 500, ...extra });
  return { result, lines };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-exec-'));
  // the job uid running the sandbox must be able to reach the workspaces below it
  await chmod(tmp, 0o711);
  repo = path.join(tmp, 'repo');
  await mkdir(repo);
  const git = (...args: string[]): Promise<unknown> =>
    run('git', ['-C', repo, ...args], {
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
    });
  await git('init', '--quiet', '-b', 'main');
  await writeFile(path.join(repo, 'hello.txt'), 'hello from the repo\n');
  await git('add', 'hello.txt');
  await git('commit', '--quiet', '-m', 'first');
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

beforeEach(async () => {
  caseNo++;
  jobDir = path.join(tmp, `job-${caseNo}`);
  workspace = path.join(jobDir, 'workspace');
  artifactsDir = path.join(tmp, `artifacts-${caseNo}`);
});

describe('runJob', () => {
  it('checks out and runs commands in the workspace', async () => {
    const steps = stepsOf(
      `  - !CheckoutStep\n    name: checkout\n    cloneDepth: 1\n${cmd('show', 'cat hello.txt\necho "ws=$ONEDEV_WORKSPACE"\necho "leak=[${GITLOOM_LEAK_TEST:-}]"')}`,
    );
    process.env.GITLOOM_LEAK_TEST = 'server-only';
    const { result, lines } = await exec(steps, { env: { EXTRA: '1' } });
    delete process.env.GITLOOM_LEAK_TEST;
    expect(result).toEqual({ status: 'SUCCESSFUL', publishedArtifacts: [], failedSteps: [] });
    expect(lines).toContain('Running step "checkout"...');
    expect(lines).toContain('Checked out');
    expect(lines).toContain('hello from the repo');
    expect(lines).toContain(`ws=${workspace}`);
    expect(lines).toContain('leak=[]');
    expect(lines.at(-1)).toBe('Job finished');
  });

  it('fails the build on a failing step and honours step conditions', async () => {
    const steps = stepsOf(
      cmd('ok', 'echo one') +
        cmd('boom', 'echo two\nexit 3') +
        cmd('after', 'echo should-not-run') +
        cmd('cleanup', 'echo cleanup-ran', '    condition: ALWAYS\n') +
        cmd('never', 'echo never-ran', '    condition: NEVER\n'),
    );
    const { result, lines } = await exec(steps);
    expect(result.status).toBe('FAILED');
    expect(result.failedSteps).toEqual(['boom']);
    expect(lines).toContain('Step "boom" failed: Command exited with code 3');
    expect(lines).toContain('cleanup-ran');
    expect(lines).not.toContain('should-not-run');
    expect(lines).not.toContain('never-ran');
    expect(lines.at(-1)).toBe('Job failed');
  });

  it('runs the default interpreter as `sh script` without implicit set -e', async () => {
    const { result, lines } = await exec(stepsOf(cmd('lenient', 'false\necho after-false') + cmd('strict', 'set -e\nfalse\necho not-here')));
    expect(lines).toContain('after-false');
    expect(lines).toContain('Step "lenient" is successful');
    expect(lines).not.toContain('not-here');
    expect(result.failedSteps).toEqual(['strict']);
  });

  it('runs a shell interpreter with the chosen shell', async () => {
    const steps = stepsOf(
      `  - !CommandStep\n    name: b\n    runInContainer: false\n    interpreter: !ShellInterpreter\n      shell: bash\n      commands:\n      - 'if [[ -n "$BASH_VERSION" ]]; then echo is-bash; fi'\n`,
    );
    const { result, lines } = await exec(steps);
    expect(result.status).toBe('SUCCESSFUL');
    expect(lines).toContain('is-bash');
  });

  it('fails with a clear message when the shell does not exist', async () => {
    const steps = stepsOf(
      `  - !CommandStep\n    name: b\n    runInContainer: false\n    interpreter: !ShellInterpreter\n      shell: no-such-shell-xyz\n      commands: [echo hi]\n`,
    );
    const { result, lines } = await exec(steps);
    expect(result.status).toBe('FAILED');
    expect(lines.join('\n')).toMatch(/Step "b" failed: Unable to run 'no-such-shell-xyz'/);
  });

  it('masks secrets, including values split across output chunks', async () => {
    const steps = stepsOf(
      cmd(
        'leak',
        "echo plain token-xyz-123 here\nprintf 'tok'; sleep 0.3; printf 'en-xyz-123 end\\n'\necho \"var @secret:db@\"\necho to-stderr token-xyz-123 >&2\nprintf 'no newline token-xyz-123'",
      ),
    );
    const { result, lines } = await exec(steps, {
      secrets: ['token-xyz-123'],
      variables: { projectName: 'p', projectPath: 'p', jobName: 'J', ref: 'refs/heads/main', commitHash: 'c', buildNumber: 1, secrets: { db: 'db-pass-9' } },
    });
    expect(result.status).toBe('SUCCESSFUL');
    const text = lines.join('\n');
    expect(text).not.toContain('token-xyz-123');
    expect(text).not.toContain('db-pass-9');
    expect(lines).toContain('plain ****** here');
    expect(lines).toContain('****** end');
    expect(lines).toContain('var ******');
    expect(lines).toContain('to-stderr ******');
    expect(lines).toContain('no newline ******');
  });

  it('cancel kills the whole process group, grandchildren included', async () => {
    const controller = new AbortController();
    const marker = `1000.${process.pid}${caseNo}`;
    let grandchild = 0;
    const lines: string[] = [];
    const started = Date.now();
    const result = await runJob({
      jobDir,
      steps: stepsOf(cmd('long', `sleep ${marker} &\necho "child $!"\nwait`) + cmd('later', 'echo later', '    condition: ALWAYS\n')),
      checkout: gitCheckout,
      artifactsDir,
      signal: controller.signal,
      killGraceMs: 500,
      log: (l) => {
        lines.push(l);
        const m = /^child (\d+)$/.exec(l);
        if (m) {
          setTimeout(() => {
            grandchild = processesWith(marker).length;
            controller.abort();
          }, 300);
        }
      },
    });
    expect(result.status).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(grandchild).toBeGreaterThan(0);
    expect(await waitGone(marker)).toBe(true);
    expect(lines).not.toContain('later');
    expect(lines.at(-1)).toBe('Job cancelled');
  });

  it('SIGKILLs a grandchild that ignores SIGTERM after the grace period', async () => {
    const controller = new AbortController();
    const marker = `stubborn-${process.pid}-${caseNo}`;
    let stubborn = 0;
    const result = await runJob({
      jobDir,
      steps: stepsOf(cmd('stubborn', `sh -c 'trap "" TERM; echo "stubborn $$"; while true; do sleep 1; done' ${marker} &\nwait`)),
      checkout: gitCheckout,
      artifactsDir,
      signal: controller.signal,
      killGraceMs: 300,
      log: (l) => {
        const m = /^stubborn (\d+)$/.exec(l);
        if (m) {
          stubborn = processesWith(marker).length;
          controller.abort();
        }
      },
    });
    expect(result.status).toBe('CANCELLED');
    expect(stubborn).toBeGreaterThan(0);
    expect(await waitGone(marker)).toBe(true);
  });

  it('times out with TIMED_OUT and kills the command', async () => {
    const marker = `30.${process.pid}${caseNo}`;
    let running = 0;
    const started = Date.now();
    const lines: string[] = [];
    const result = await runJob({
      jobDir,
      steps: stepsOf(cmd('sleepy', `echo "pid $$"\nsleep ${marker}`)),
      checkout: gitCheckout,
      artifactsDir,
      timeoutSeconds: 1,
      killGraceMs: 500,
      log: (l) => {
        lines.push(l);
        if (/^pid \d+$/.test(l)) setTimeout(() => (running = processesWith(marker).length), 200);
      },
    });
    expect(result.status).toBe('TIMED_OUT');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(running).toBeGreaterThan(0);
    expect(await waitGone(marker)).toBe(true);
    expect(lines).toContain('Step "sleepy" was stopped (timed out)');
  });

  it('terminates background processes left behind when the step ends', async () => {
    const marker = `1000.${process.pid}${caseNo}`;
    let seen = 0;
    const result = await runJob({
      jobDir,
      steps: stepsOf(cmd('daemon', `sleep ${marker} &\necho "bg $!"\nsleep 1`) + cmd('look', 'echo look')),
      checkout: gitCheckout,
      artifactsDir,
      killGraceMs: 500,
      log: (l) => {
        if (/^bg \d+$/.test(l)) setTimeout(() => (seen = processesWith(marker).length), 300);
      },
    });
    expect(result.status).toBe('SUCCESSFUL');
    expect(seen).toBeGreaterThan(0);
    expect(await waitGone(marker)).toBe(true);
  });

  it('publishes artifacts relative to the source path, never through links leading outside', async () => {
    await writeFile(path.join(tmp, `outside-${caseNo}.zip`), 'outside');
    const steps = stepsOf(
      cmd(
        'build',
        `mkdir -p dist/sub\necho a > dist/a.zip\necho b > dist/sub/b.tar.gz\necho c > dist/c.txt\necho root > top.zip\nln -s ${path.join(tmp, `outside-${caseNo}.zip`)} dist/evil.zip\nln -s a.zip dist/alias.zip`,
      ) + `  - !PublishArtifactStep\n    name: publish\n    sourcePath: dist\n    artifacts: '**/*.zip **/*.tar.gz -sub/skip*'\n`,
    );
    const { result, lines } = await exec(steps);
    expect(result.status).toBe('SUCCESSFUL');
    expect([...result.publishedArtifacts].sort()).toEqual(['a.zip', 'alias.zip', 'sub/b.tar.gz']);
    expect(await readFile(path.join(artifactsDir, 'sub/b.tar.gz'), 'utf8')).toBe('b\n');
    expect(await readFile(path.join(artifactsDir, 'alias.zip'), 'utf8')).toBe('a\n');
    expect(existsSync(path.join(artifactsDir, 'evil.zip'))).toBe(false);
    expect(existsSync(path.join(artifactsDir, 'c.txt'))).toBe(false);
    expect(lines.join('\n')).toContain("Skipped 'evil.zip'");
  });

  it('skips a published file over the artifact limit, with the reason in the log', async () => {
    const steps = stepsOf(
      cmd('build', 'head -c 2048 /dev/zero > big.bin\necho small > small.txt') +
        `  - !PublishArtifactStep\n    name: publish\n    artifacts: 'big.bin small.txt'\n`,
    );
    const { result, lines } = await exec(steps, { artifactMaxBytes: 1024 });
    expect(result.publishedArtifacts).toEqual(['small.txt']);
    expect(lines).toContain("Skipped 'big.bin': larger than the artifact limit of 1024 bytes");
    expect(existsSync(path.join(artifactsDir, 'big.bin'))).toBe(false);
  });

  it('refuses a publish source path outside the workspace', async () => {
    const { result, lines } = await exec(stepsOf(`  - !PublishArtifactStep\n    name: publish\n    sourcePath: /etc\n    artifacts: '**'\n`));
    expect(result.status).toBe('FAILED');
    expect(lines.join('\n')).toMatch(/Source path must be a relative path inside the workspace/);
  });

  it('sets the build version from a file and from a log instruction, and interpolates variables', async () => {
    const steps = stepsOf(
      cmd('write', 'echo "1.4.@build_number@" > buildVersion') +
        `  - !SetBuildVersionStep\n    name: version\n    buildVersion: '@file:buildVersion@'\n` +
        cmd(
          'show',
          'echo "version is @build_version@ on @branch@, FLAVOR=$FLAVOR, @param:flavor@"',
          "    envVars:\n    - name: FLAVOR\n      value: '@param:flavor@-env'\n",
        ) +
        `  - !SetBuildDescriptionStep\n    name: describe\n    buildDescription: 'Built @commit_hash@'\n`,
      `  paramSpecs:\n  - !TextParam {name: flavor}\n`,
    );
    const vars = {
      projectName: 'p',
      projectPath: 'g/p',
      jobName: 'J',
      ref: 'refs/heads/main',
      commitHash: 'abc123',
      buildNumber: 17,
      params: { flavor: ['debug'] },
    };
    const { result, lines } = await exec(steps, { variables: vars });
    expect(result).toMatchObject({ status: 'SUCCESSFUL', version: '1.4.17', description: 'Built abc123' });
    expect(lines).toContain('version is 1.4.17 on main, FLAVOR=debug-env, debug');

    const second = await exec(stepsOf(cmd('instr', 'echo "##onedev[SetBuildVersion \'2.0-rc1\']"')), { jobDir: `${jobDir}-again` });
    expect(second.result.version).toBe('2.0-rc1');
  });

  it('fails a step whose variables cannot be resolved', async () => {
    const { result, lines } = await exec(stepsOf(`  - !SetBuildVersionStep\n    name: version\n    buildVersion: '@file:missing@'\n`));
    expect(result.status).toBe('FAILED');
    expect(result.version).toBeUndefined();
    expect(lines).toContain('Step "version" failed: File not found for @file:missing@');
  });

  it('fails the checkout step when the checkout callback rejects', async () => {
    const { result, lines } = await exec(stepsOf(`  - !CheckoutStep\n    name: checkout\n`), {
      checkout: async () => {
        throw new Error('remote hung up');
      },
    });
    expect(result.status).toBe('FAILED');
    expect(lines).toContain('Step "checkout" failed: remote hung up');
  });

  it('writes timestamped lines to a writable sink', async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    await runJob({ jobDir, steps: stepsOf(cmd('hi', 'echo hi')), checkout: gitCheckout, artifactsDir, log: out });
    const text = chunks.join('');
    expect(text).toMatch(/^\d\d:\d\d:\d\d Running step "hi"\.\.\.$/m);
    expect(text).toMatch(/^\d\d:\d\d:\d\d hi$/m);
    expect(text.endsWith('Job finished\n')).toBe(true);
  });

  it('is cancelled before starting when the signal is already aborted', async () => {
    const { result, lines } = await exec(stepsOf(cmd('x', 'echo ran')), { signal: AbortSignal.abort() });
    expect(result.status).toBe('CANCELLED');
    expect(lines).not.toContain('ran');
  });

  it('refuses a checkout path through a symbolic link an earlier step left', async () => {
    const outside = path.join(tmp, `outside-${caseNo}`);
    await mkdir(outside);
    const { result, lines } = await exec(stepsOf(cmd('plant', `ln -s ${outside} sub`) + `  - !CheckoutStep\n    name: checkout\n    checkoutPath: sub/x\n`));
    expect(result.status).toBe('FAILED');
    expect(lines).toContain("Step \"checkout\" failed: Unable to check out into 'sub/x': Path is a symbolic link in the workspace: 'sub'");
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
  });

  it('checks out into a checkout path inside the workspace', async () => {
    const { result } = await exec(stepsOf(`  - !CheckoutStep\n    name: checkout\n    checkoutPath: src/@project_name@\n`), {
      variables: { projectName: 'proj', projectPath: 'proj', jobName: 'J', ref: 'refs/heads/main', commitHash: 'c', buildNumber: 1 },
    });
    expect(result.status).toBe('SUCCESSFUL');
    expect(await readFile(path.join(workspace, 'src/proj/hello.txt'), 'utf8')).toBe('hello from the repo\n');
  });
});
