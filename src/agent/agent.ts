/**
 * The build agent (docs/compatibility.md#build-agents; `gitloom agent --server <url> --token
 * <agent token>`): connects out to the server — the server never connects to it — and runs the
 * jobs it leases with the server's own executor (src/agent/job.ts).
 *
 * - **Connect** (POST `/~agent/connect`): name, OS, CPUs, memory, container engine, attributes,
 *   and the session of its last connection, kept in the work dir (`session`): an agent killed
 *   and started again replaces its previous session at once, whose builds the server ends as a
 *   lost agent's. A server that does not answer is tried again (100 ms doubling to 5 s) for
 *   ever, as is one that says the token's agent is connected already (409
 *   `GITLOOM_ERR_AGENT_CONNECTED`: another agent with the token, or a previous run's session not
 *   yet expired that this work dir did not keep); a refused token (401) ends the agent.
 * - **Heartbeat** (every `heartbeatMs`): the running builds, whose leases it renews; the answer's
 *   `stop` builds are stopped, its attributes (an administrator may change them) stored in
 *   `attributes.json`. An unknown session (409 `GITLOOM_ERR_AGENT_SESSION`: the agent was
 *   removed or replaced) connects again; running jobs keep running, and the next heartbeat
 *   names them under the new session. The server leases a build to one session
 *   (`agent:<id>:<session>`, src/domain/builds/agent-leases.ts), so it names them in `stop`:
 *   they are stopped, and the server ends them as a lost agent's (their leases expire).
 * - **Lease** (long poll, {@link LEASE_WAIT_MS}): a job that comes runs at once, beside the
 *   others, and the agent asks again at once; the server decides whether the agent has room.
 * - **Stop** ({@link Agent.stop}, on SIGTERM/SIGINT): no more leases, the running jobs stopped
 *   (each ends FAILED on the server, through its finish), then the agent disconnects, so that
 *   its token may connect again at once, and ends.
 */
import { AGENT_PATHS, LEASE_WAIT_MS, type AgentJob, type ConnectRequest, type ConnectResponse, type HeartbeatResponse } from '../wire/agent-protocol.js';
import { AgentJobRun, type JobEnvironment } from './job.js';
import { Backoff, callServer, callServerJson, ServerRefusal, ServerUnreachable } from './server-client.js';
import { readSession, writeAttributes, writeSession, type WorkDir } from './work-dir.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** The refusal of a connect whose token's agent is online under another session. */
export const AGENT_CONNECTED = 'GITLOOM_ERR_AGENT_CONNECTED';
/** The refusal of a heartbeat or lease whose session the server does not know. */
export const AGENT_SESSION = 'GITLOOM_ERR_AGENT_SESSION';

/** Milliseconds a lease request may take beyond {@link LEASE_WAIT_MS} before it counts as unanswered. */
const LEASE_MARGIN_MS = 10_000;

/** Options of {@link Agent}. */
export interface AgentOptions {
  /** The server's URL. */
  readonly server: string;
  /** The agent token (Administration › Agents). */
  readonly token: string;
  /** What the agent says of itself, but for its attributes. */
  readonly describe: Omit<ConnectRequest, 'attributes'>;
  /** The attributes it reports first (then the server's, stored in the work dir). */
  readonly attributes: Readonly<Record<string, string>>;
  readonly workDir: WorkDir;
  /** What the jobs run with, but for the server's URL and the jobs dir. */
  readonly jobs: Omit<JobEnvironment, 'server' | 'jobsDir' | 'report'>;
  /** The agent's log (stderr). */
  readonly report: (message: string) => void;
}

/** The agent's fault that ends it: a refused token, or a refusal it cannot act on. */
export class AgentFatal extends Error {}

/** A build agent; {@link Agent.run} until {@link Agent.stop}. */
export class Agent {
  private readonly stopping = new AbortController();
  private readonly runs = new Map<number, AgentJobRun>();
  private connection: Promise<ConnectResponse> | null = null;
  private current: ConnectResponse | null = null;
  private attributes: Record<string, string>;
  private paused = false;
  private fatal: AgentFatal | null = null;
  private readonly fatalSignal = new AbortController();

  constructor(private readonly options: AgentOptions) {
    this.attributes = { ...options.attributes };
  }

  /** The builds running on the agent. */
  get running(): number[] {
    return [...this.runs.keys()];
  }

  /**
   * Connects and serves until {@link Agent.stop}, then waits for the running jobs to end and
   * their outcomes to be posted.
   *
   * @throws AgentFatal when the server refuses the token (the running jobs are stopped first).
   */
  async run(): Promise<void> {
    const heartbeat = this.heartbeatLoop();
    const leasing = this.leaseLoop();
    await leasing;
    // stopped (or fatal): the running jobs end; heartbeats go on meanwhile, renewing their leases
    for (const run of this.runs.values()) run.stop('shutdown');
    await Promise.all([...this.runs.values()].map((run) => run.done));
    this.fatalSignal.abort();
    await heartbeat;
    if (this.fatal) throw this.fatal;
    await this.disconnect();
  }

  /**
   * Tells the server the agent stops (its jobs ended), so that the token may connect again at
   * once; a server that does not answer within 5 s lets the connection time out instead.
   */
  private async disconnect(): Promise<void> {
    const session = this.current?.session;
    if (session === undefined) return;
    try {
      await callServer(this.options.server, AGENT_PATHS.disconnect, { token: this.options.token, json: { session }, timeoutMs: 5000 });
    } catch (error) {
      this.options.report(`Disconnect not answered (the connection times out instead): ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Stops leasing and the running jobs; {@link Agent.run} resolves once they ended. */
  stop(): void {
    this.stopping.abort();
  }

  /** The current session, connecting when there is none (for ever, while the server does not answer). */
  private session(): Promise<ConnectResponse> {
    if (this.current) return Promise.resolve(this.current);
    this.connection ??= this.connect().finally(() => {
      this.connection = null;
    });
    return this.connection;
  }

  /** Forgets session `session` (the server does not know it): the next call connects again. */
  private forget(session: string): void {
    if (this.current?.session === session) this.current = null;
  }

  private async connect(): Promise<ConnectResponse> {
    const backoff = new Backoff();
    for (;;) {
      try {
        const previousSession = await readSession(this.options.workDir);
        const body: ConnectRequest = { ...this.options.describe, attributes: this.attributes, ...(previousSession !== null && { previousSession }) };
        const answer = await callServerJson<ConnectResponse>(this.options.server, AGENT_PATHS.connect, {
          token: this.options.token,
          json: body,
          signal: this.stopping.signal,
        });
        if (!answer) throw new ServerUnreachable('The server answered the connect without a session');
        this.current = answer;
        await writeSession(this.options.workDir, answer.session);
        await this.storeAttributes(answer.attributes);
        this.options.report(`Connected to ${this.options.server} as agent ${answer.agentId} ('${this.options.describe.name}')`);
        return answer;
      } catch (error) {
        if (this.stopping.signal.aborted) throw error;
        if (error instanceof ServerRefusal && error.code === AGENT_CONNECTED) {
          this.options.report(`Not connected yet: ${error.detail}`);
        } else if (error instanceof ServerRefusal) {
          throw this.fail(error);
        } else if (error instanceof ServerUnreachable) {
          this.options.report(`Not connected yet: ${error.message}`);
        } else throw error;
      }
      await backoff.wait(this.stopping.signal);
    }
  }

  /** Ends the agent for a refusal it cannot act on (a refused token: 401). */
  private fail(error: ServerRefusal): AgentFatal {
    const message =
      error.status === 401
        ? `The server refused the agent token (${error.detail}): check --token / GITLOOM_AGENT_TOKEN`
        : `The server refused the agent: ${error.message}`;
    this.fatal ??= new AgentFatal(message);
    this.stop();
    return this.fatal;
  }

  private async storeAttributes(attributes: Readonly<Record<string, string>>): Promise<void> {
    if (JSON.stringify(attributes) === JSON.stringify(this.attributes)) return;
    this.attributes = { ...attributes };
    await writeAttributes(this.options.workDir, attributes);
    this.options.report(`Attributes now ${JSON.stringify(attributes)}`);
  }

  private async leaseLoop(): Promise<void> {
    const backoff = new Backoff();
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      let session: ConnectResponse;
      try {
        session = await this.session();
        const job = await callServerJson<AgentJob>(this.options.server, AGENT_PATHS.lease, {
          token: this.options.token,
          json: { session: session.session },
          signal,
          timeoutMs: LEASE_WAIT_MS + LEASE_MARGIN_MS,
        });
        backoff.reset();
        if (job) this.start(job);
        continue;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ServerRefusal && error.code === AGENT_SESSION) {
          this.forget(session!.session);
          continue;
        }
        if (error instanceof ServerRefusal) {
          this.fail(error);
          return;
        }
        if (!(error instanceof ServerUnreachable)) throw error;
        this.options.report(`Lease not answered: ${error.message}`);
      }
      await backoff.wait(signal).catch(() => undefined /* stopped: the loop ends */);
    }
  }

  private start(job: AgentJob): void {
    if (this.runs.has(job.buildId)) {
      this.options.report(`Build ${job.buildId} leased again while it runs here: ignored`);
      return;
    }
    this.options.report(`Build ${job.buildId}: running (executor ${job.executorName})`);
    const run = new AgentJobRun(job, {
      ...this.options.jobs,
      server: this.options.server,
      jobsDir: this.options.workDir.jobs,
      report: this.options.report,
    });
    this.runs.set(job.buildId, run);
    void run.done
      .catch((error: unknown) => this.options.report(`Build ${job.buildId}: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => this.runs.delete(job.buildId));
  }

  /** Heartbeats every `heartbeatMs` until {@link Agent.run} has nothing left running. */
  private async heartbeatLoop(): Promise<void> {
    const signal = this.fatalSignal.signal;
    let unanswered = false;
    while (!signal.aborted) {
      let session: ConnectResponse | null = null;
      try {
        session = await Promise.race([this.session(), aborted(signal)]);
        const answer = await callServerJson<HeartbeatResponse>(this.options.server, AGENT_PATHS.heartbeat, {
          token: this.options.token,
          json: { session: session.session, running: this.running },
          signal,
        });
        if (unanswered) this.options.report('Heartbeat answered again');
        unanswered = false;
        if (answer) await this.heard(answer);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ServerRefusal && error.code === AGENT_SESSION && session) this.forget(session.session);
        else if (error instanceof ServerRefusal) this.fail(error);
        else if (error instanceof ServerUnreachable) {
          if (!unanswered) this.options.report(`Heartbeat not answered: ${error.message}`);
          unanswered = true;
        } else if (!this.stopping.signal.aborted) throw error;
      }
      await sleep(session?.heartbeatMs ?? 1000, undefined, { signal }).catch(() => undefined /* ended: the loop ends */);
    }
  }

  /** Acts on a heartbeat's answer: stops the builds named, notes a pause, stores changed attributes. */
  private async heard(answer: HeartbeatResponse): Promise<void> {
    for (const id of answer.stop) this.runs.get(id)?.stop('cancelled');
    if (answer.paused !== this.paused) this.options.report(answer.paused ? 'Paused by an administrator: no new jobs' : 'Resumed');
    this.paused = answer.paused;
    await this.storeAttributes(answer.attributes);
  }
}

/** A promise rejected when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
