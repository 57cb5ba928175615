import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually, givenRepo, removeWorkTrees, runJobOnCommit } from './fixtures.js';
import type { TestServer } from './server.js';

/** What an agent reported when it connected, as the agent protocol writes it; `online` sets `online_until` an hour ahead (or an hour ago). */
export interface GivenAgent {
  name: string;
  ipAddress?: string;
  osName?: string;
  osVersion?: string;
  osArch?: string;
  cpus?: number;
  memory?: number;
  engine?: string | null;
  paused?: boolean;
  /** Epoch ms. */
  lastUsedDate?: number;
  /** true: online for an hour; false: was online until an hour ago; null: never connected. */
  online?: boolean | null;
  attributes?: Record<string, string>;
}

/**
 * Creates an agent token through the API and writes an agent row for it, as the agent protocol's
 * connect does (with its attributes). Returns the agent's and the token's ids.
 */
export async function givenAgent(server: TestServer, agent: GivenAgent): Promise<{ id: number; tokenId: number }> {
  const created = await server.call('POST', '/agent-tokens');
  if (created.status !== 200) throw new Error(`create agent token: ${created.status} ${created.text}`);
  const tokenId = created.json as number;
  const db = server.server.services.db;
  const now = Date.now();
  const online = agent.online === undefined ? true : agent.online;
  const { id } = await db
    .insertInto('agents')
    .values({
      tokenId,
      name: agent.name,
      ipAddress: agent.ipAddress ?? '127.0.0.1',
      osName: agent.osName ?? 'Linux',
      osVersion: agent.osVersion ?? '6.1.0',
      osArch: agent.osArch ?? 'amd64',
      cpus: agent.cpus ?? 4,
      memory: agent.memory ?? 8 * 1024 ** 3,
      engine: agent.engine === undefined ? 'podman 4.3.1' : agent.engine,
      temporal: 0,
      paused: agent.paused ? 1 : 0,
      lastUsedDate: agent.lastUsedDate ?? now,
      session: online === null ? null : `session-${tokenId}`,
      onlineUntil: online === null ? null : online ? now + 3_600_000 : now - 3_600_000,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const attributes = Object.entries(agent.attributes ?? {}).map(([name, value]) => ({ agentId: id, name, value }));
  if (attributes.length > 0) await db.insertInto('agentAttributes').values(attributes).execute();
  return { id, tokenId };
}

/**
 * Runs `count` builds of a job without steps in a new project `name` and waits until they
 * finished (a later run of the job on the commit may cancel an earlier one); returns their ids
 * (in order, numbers 1…count).
 */
export async function givenFinishedBuilds(server: TestServer, name: string, count: number): Promise<number[]> {
  const repo = await givenRepo(server, name, { files: { '.onedev-buildspec.yml': 'version: 25\njobs:\n- name: Noop\n  steps: []\n' } });
  const commitHash = await repo.head('main');
  await removeWorkTrees();
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await runJobOnCommit(server, { projectId: repo.id, commitHash, jobName: 'Noop' });
    if (res.status !== 200) throw new Error(`run job: ${res.status} ${res.text}`);
    ids.push(res.json as number);
  }
  const db = server.server.services.db;
  const finished = ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;
  const done = await eventually(
    async () => (await db.selectFrom('builds').select('id').where('id', 'in', ids).where('status', 'in', finished).execute()).length === count,
  );
  if (!done) throw new Error(`builds ${ids.join(', ')} did not finish`);
  return ids;
}

/**
 * Makes a build look as if agent `agentId` ran it (`agent_id`), RUNNING under a lease an hour
 * long when `running` (the scheduler leaves it alone), else as it finished.
 */
export async function ranOnAgent(server: TestServer, buildId: number, agentId: number, running: boolean): Promise<void> {
  const set = running
    ? { agentId, status: 'RUNNING' as const, finishDate: null, leaseOwner: `agent-${agentId}`, leaseExpires: Date.now() + 3_600_000 }
    : { agentId };
  await server.server.services.db.updateTable('builds').set(set).where('id', '=', buildId).execute();
}

/** A `gitloom agent` child process: its output so far and its exit. */
export interface AgentProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `gitloom agent` from the sources against `serverUrl` with `workDir`, its token and `env`
 * (e.g. `GITLOOM_CONTAINER_HOST`) in its environment, and `args` (`--name`, `--attribute`, …).
 */
export function startAgent(serverUrl: string, workDir: string, token: string, args: string[] = [], env: Record<string, string> = {}): AgentProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'agent', '--server', serverUrl, '--work-dir', workDir, ...args], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { ...process.env, ...env, GITLOOM_AGENT_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * A job of a build spec (YAML, at the level of `jobs:` items) running shell `commands` in one
 * step on the executor `executor`; `extra` lines go after its name (`  retryCondition: always`,
 * a `paramSpecs:` block, …).
 */
export function shellJob(name: string, executor: string, commands: string[], extra: string[] = []): string {
  return [
    `- name: ${name}`,
    `  jobExecutor: ${executor}`,
    ...extra,
    '  steps:',
    '  - !CommandStep',
    '    name: run',
    '    runInContainer: false',
    '    interpreter: !DefaultInterpreter',
    '      commands:',
    ...commands.map((c) => `      - ${JSON.stringify(c)}`),
  ].join('\n');
}
