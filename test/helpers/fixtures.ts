import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, type ApiResponse, type TestServer } from './server.js';

/** A user made by `server.createUser`: id, Basic header, name and password. */
export type TestUser = Awaited<ReturnType<TestServer['createUser']>>;

/**
 * Polls `probe` every 50 ms until it returns a truthy value (background work after pushes);
 * after `timeoutMs` returns the last value, so the caller's assertion reports it.
 */
export async function eventually<T>(probe: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates users through the API, in order. */
export async function givenUsers(server: TestServer, ...names: string[]): Promise<TestUser[]> {
  const users: TestUser[] = [];
  for (const name of names) users.push(await server.createUser(name));
  return users;
}

/** Creates a project through the API (as `auth`, admin by default); returns its id. Throws unless 200. */
export async function givenProject(server: TestServer, body: Record<string, unknown>, auth?: string | null): Promise<number> {
  const res = await server.call('POST', '/projects', { body, auth });
  if (res.status !== 200) throw new Error(`create project ${JSON.stringify(body)}: ${res.status} ${res.text}`);
  return res.json as number;
}

/** Grants a role (by name) on a project to a user. */
export async function grantRole(server: TestServer, projectId: number, userId: number, roleName: string): Promise<void> {
  const roles = (await server.call('GET', `/roles?name=${encodeURIComponent(roleName)}`)).json as { id: number }[];
  const res = await server.call('POST', '/user-authorizations', { body: { projectId, userId, roleId: roles[0].id } });
  if (res.status !== 200) throw new Error(`grant: ${res.status} ${res.text}`);
}

/** A project with a work tree whose `main` is pushed. */
export interface Repo {
  id: number;
  path: string;
  work: string;
  remote: string;
  /** Commits files on top of a branch as the server has it (created from `from`, default main, when new) and pushes it; returns the head. */
  commitOn(branch: string, files: Record<string, string>, message: string, from?: string): Promise<string>;
  head(branch: string): Promise<string>;
}

const dirs: string[] = [];

/** Removes the work trees made by {@link givenRepo} and {@link freshClone}. */
export async function removeWorkTrees(): Promise<void> {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
}

/** Creates a project (optionally a fork) and pushes `main` with `files`. */
export async function givenRepo(
  server: TestServer,
  name: string,
  options: { files?: Record<string, string>; forkOf?: Repo; auth?: string; user?: { name: string; password: string } } = {},
): Promise<Repo> {
  const id = await givenProject(server, { name, ...(options.forkOf && { forkedFromId: options.forkOf.id }) }, options.auth);
  const remote = gitUrl(server, name, options.user ?? { name: ADMIN.name, password: ADMIN.password });
  let work: string;
  if (options.forkOf) {
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-pr-'));
    await git(work, ['clone', '-q', remote, '.']);
  } else {
    work = await makeWorkTree(options.files ?? { 'README.md': `# ${name}\n` });
    await git(work, ['push', '-q', remote, 'main']);
  }
  dirs.push(work);
  const repo: Repo = {
    id,
    path: name,
    work,
    remote,
    async commitOn(branch, files, message, from = 'main') {
      const onServer = (await git(work, ['ls-remote', remote, `refs/heads/${branch}`])).trim() !== '';
      await git(work, ['fetch', '-q', remote, onServer ? branch : from]);
      await git(work, ['checkout', '-q', '-B', branch, 'FETCH_HEAD']);
      const hash = await commitFiles(work, files, message);
      await git(work, ['push', '-q', '-f', remote, branch]);
      return hash;
    },
    async head(branch) {
      return (await git(work, ['ls-remote', remote, `refs/heads/${branch}`])).split('\t')[0];
    },
  };
  return repo;
}

/** Clones a project into a fresh directory (removed by {@link removeWorkTrees}) and returns it. */
export async function freshClone(server: TestServer, projectPath: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-clone-'));
  dirs.push(dir);
  await git(dir, ['clone', '-q', gitUrl(server, projectPath, { name: ADMIN.name, password: ADMIN.password }), '.']);
  return dir;
}

/** One job of {@link commandSpec}: its shell commands, and the trigger that runs it on its own. */
export interface CommandJob {
  name: string;
  commands: string[];
  /** `!BranchUpdateTrigger` or `!PullRequestUpdateTrigger` on branches `main`. */
  trigger?: 'BranchUpdateTrigger' | 'PullRequestUpdateTrigger';
}

/** A build spec (version 25, docs/compatibility.md#builds-build-spec) whose jobs each run one command step. */
export function commandSpec(...jobs: CommandJob[]): string {
  const lines = ['version: 25', 'jobs:'];
  for (const job of jobs) {
    lines.push(
      `- name: ${job.name}`,
      '  steps:',
      '  - !CommandStep',
      '    name: run',
      '    runInContainer: false',
      '    interpreter: !DefaultInterpreter',
      '      commands:',
      ...job.commands.map((command) => `      - ${command}`),
    );
    if (job.trigger) lines.push('  triggers:', `  - !${job.trigger}`, '    branches: main');
  }
  return `${lines.join('\n')}\n`;
}

/** A job run on a commit (JobRunOnCommit): `refName` defaults to `refs/heads/main`, `params` to none, `reason` to `test`. */
export interface JobRunOnCommit {
  projectId: number;
  commitHash: string;
  jobName: string;
  refName?: string;
  params?: Record<string, string[]>;
  reason?: string;
}

/** Runs a job on a commit through `POST /~api/job-runs` as `auth` (the administrator when absent); the API's answer (200: the build id). */
export function runJobOnCommit(server: TestServer, run: JobRunOnCommit, auth?: string | null): Promise<ApiResponse> {
  return server.call('POST', '/job-runs', {
    body: { '@type': 'JobRunOnCommit', refName: 'refs/heads/main', params: {}, reason: 'test', ...run },
    ...(auth !== undefined && { auth }),
  });
}
