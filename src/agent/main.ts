/**
 * `gitloom agent` (docs/compatibility.md#build-agents, README "Build agents"): prepares the work
 * dir, finds the container engine, removes what a previous run left in the work dir and on the
 * engine, and runs the
 * {@link Agent} until SIGTERM or SIGINT.
 */
import os from 'node:os';
import { ContainerEngines } from '../ci/container-engine.js';
import { CacheStore } from '../ci/job-caches.js';
import { planSandbox } from '../ci/sandbox.js';
import { jobSandboxFromEnv } from '../config.js';
import { Agent } from './agent.js';
import { describeEngine, describeHost } from './host.js';
import { parseAttributeOptions, prepareWorkDir, readAttributes, removeLeftJobs, workDirAt, writeAttributes } from './work-dir.js';

/** The options of `gitloom agent`. */
export interface AgentCommandOptions {
  /** The server's URL (`http:` or `https:`). */
  readonly server: string;
  /** The agent token. */
  readonly token: string;
  /** Default: the host name. */
  readonly name?: string;
  readonly workDir: string;
  /** `name=value` each. */
  readonly attribute: readonly string[];
  /** Bound of the job caches, MiB. */
  readonly cacheMb: number;
}

/**
 * Runs the agent until SIGTERM or SIGINT. The job sandbox is configured by the server's
 * variables (`GITLOOM_JOB_SANDBOX`…, README "Job sandbox"), the container engine by
 * `GITLOOM_CONTAINER_HOST` and `GITLOOM_CONTAINER_INSECURE_REGISTRIES`, as on the server.
 *
 * @param report the agent's log lines (stderr).
 * @throws Error for invalid options; AgentFatal (src/agent/agent.ts) when the server refuses the token.
 */
export async function runAgentCommand(options: AgentCommandOptions, report: (message: string) => void): Promise<void> {
  const { protocol } = new URL(options.server);
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(`--server must be an http(s) URL, got '${options.server}'`);
  if (!options.token) throw new Error('An agent token is required: --token or GITLOOM_AGENT_TOKEN (Administration › Agents)');
  if (!Number.isFinite(options.cacheMb) || options.cacheMb < 0) throw new Error(`--cache-mb must be a number of MiB, got '${options.cacheMb}'`);
  const sandbox = jobSandboxFromEnv(process.env);
  const workDir = workDirAt(options.workDir);
  await prepareWorkDir(workDir, planSandbox(sandbox).kind === 'sandbox');
  const given = parseAttributeOptions(options.attribute);
  const attributes = { ...(await readAttributes(workDir)), ...given };
  if (Object.keys(given).length > 0) await writeAttributes(workDir, attributes);

  const containers = new ContainerEngines({
    host: process.env.GITLOOM_CONTAINER_HOST || null,
    insecureRegistries: (process.env.GITLOOM_CONTAINER_INSECURE_REGISTRIES ?? '').split(/[\s,]+/).filter(Boolean),
    stateDir: workDir.containers,
    log: report,
  });
  try {
    const engine = await describeEngine(containers, report);
    report(`Work dir ${workDir.root}; container engine: ${engine ?? 'none'}`);
    const connected = engine === null ? null : await containers.get();
    await removeLeftJobs(workDir, report, connected === null || 'unavailable' in connected ? null : connected);
    const agent = new Agent({
      server: options.server,
      token: options.token,
      describe: { name: options.name || os.hostname(), ...describeHost(), engine },
      attributes,
      workDir,
      jobs: {
        caches: new CacheStore(workDir.caches, Math.round(options.cacheMb * 1024 * 1024)),
        sandbox,
        containers: engine === null ? null : containers,
      },
      report,
    });
    const stop = (signal: string) => {
      report(`${signal} received: stopping the running jobs`);
      agent.stop();
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    await agent.run();
  } finally {
    await containers.close();
  }
}
