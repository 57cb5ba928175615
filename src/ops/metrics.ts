/**
 * Prometheus metrics (`/~metrics`), every one registered here with `prom-client`:
 * HTTP requests by route pattern and status with latency histograms, git commands and their
 * durations, bytes pushed and fetched over smart HTTP, builds by status and job durations,
 * outbox lag and attempts, the database pool, and Node's default process metrics.
 */
import type { Kysely } from 'kysely';
import client from 'prom-client';
import { DatabaseUnavailable } from '../db/availability.js';
import { availabilityOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { configureGit } from '../git/command.js';
import { uploadPackLoad } from '../git/upload-pack-slots.js';
import { journalLag } from '../domain/journal/index.js';
import { outboxLag, pendingMessageCount } from '../domain/outbox/index.js';
import { buildsFinishedAfter, unfinishedBuildCounts } from '../domain/builds/index.js';

/** Connection counts of the database pool. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The metrics of one server: its registry and the recorders the server calls. */
export interface Metrics {
  registry: client.Registry;
  /** Records one HTTP request: method, route pattern (not the raw URL), status, duration in seconds. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** Records bytes moved by git smart HTTP: `push` (received) or `fetch` (sent). */
  observeGitTransfer(direction: 'push' | 'fetch', bytes: number): void;
  /** Records one outbox send attempt. */
  observeOutboxAttempt(kind: 'WEBHOOK' | 'MAIL', succeeded: boolean, ms: number): void;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_SECONDS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** A labelled value in prom-client's export shape (what a registered metric's `get()` lists). */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** The counts of one (method, route, status) series: requests per bucket (not cumulative; the last is +Inf), their sum of seconds. */
interface RequestSeries {
  labels: { method: string; route: string; status: string };
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * The HTTP request histogram, recorded on every request: a series is looked up by one string
 * key and an observation is two additions and a bucket search, where prom-client's labelled
 * `observe` validates and hashes the label object each time (measured as most of a small
 * request's metrics cost). prom-client still writes the exposition: {@link histogram} and
 * {@link counter} are metrics a `Registry` takes, listing their values in prom-client's
 * format (cumulative `_bucket`s with `le`, `_sum`, `_count`; the counter from the same counts).
 */
export class RequestHistogram {
  private readonly series = new Map<string, RequestSeries>();

  /** `bounds`: the buckets' upper bounds in seconds, ascending. */
  constructor(private readonly bounds: readonly number[]) {}

  /** Records one request of `seconds`. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]) bucket++;
    series.buckets[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  /** The histogram as a registrable metric named `name`. */
  histogram(name: string, help: string) {
    return this.metric(name, help, 'histogram', () =>
      [...this.series.values()].flatMap((series) => {
        let cumulative = 0;
        const values: MetricValue[] = this.bounds.map((le, i) => {
          cumulative += series.buckets[i];
          return { labels: { le, ...series.labels }, value: cumulative, metricName: `${name}_bucket` };
        });
        values.push(
          { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${name}_bucket` },
          { labels: series.labels, value: series.sum, metricName: `${name}_sum` },
          { labels: series.labels, value: series.count, metricName: `${name}_count` },
        );
        return values;
      }),
    );
  }

  /** The request count of every series as a registrable counter named `name`. */
  counter(name: string, help: string) {
    return this.metric(name, help, 'counter', () => [...this.series.values()].map((series) => ({ labels: series.labels, value: series.count })));
  }

  /** A registry takes any object with a name and `get()` (its typings list only its own classes). */
  private metric(name: string, help: string, type: 'histogram' | 'counter', values: () => MetricValue[]): client.Metric {
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => this.series.clear(),
    };
    return metric as unknown as client.Metric;
  }
}

/** The git subcommand of an argument list: the first argument that is neither an option nor the value of `-c`/`-C`. */
function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C')
      i++; // the option's value is no subcommand
    else if (!args[i].startsWith('-')) return args[i];
  }
  return 'unknown';
}

/**
 * A `collect` that reads the database: while the database is unavailable the metric keeps its
 * last value (`gitloom_database_up` says it is stale), so a scrape still answers.
 */
function fromDatabase<T>(read: (this: T) => Promise<void>): (this: T) => Promise<void> {
  return async function collect(this: T) {
    try {
      await read.call(this);
    } catch (error) {
      if (!(error instanceof DatabaseUnavailable)) throw error;
    }
  };
}

/**
 * Creates the registry of a server over its database (a handle from openDatabase). `poolStats`
 * reads the database pool. Git command metrics are process-wide (the git runner has one
 * observer): the last server created in a process records them.
 */
export function createMetrics(db: Kysely<Database>, poolStats: () => PoolStats): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'gitloom_' });
  const requests = new RequestHistogram(SECONDS);
  registry.registerMetric(requests.histogram('gitloom_http_request_duration_seconds', 'HTTP request latency by method, route pattern and status'));
  registry.registerMetric(requests.counter('gitloom_http_requests_total', 'HTTP requests by method, route pattern and status'));
  const observeGitTransfer = registerGitMetrics(registry);
  const observeOutboxAttempt = registerOutboxAttemptMetrics(registry);
  registerBacklogGauges(registry, db);
  registerDatabaseGauges(registry, db, poolStats);
  return {
    registry,
    observeRequest: (method, route, status, seconds) => requests.observe(method, route, status, seconds),
    observeGitTransfer,
    observeOutboxAttempt,
  };
}

/**
 * Registers the git metrics: commands by subcommand and outcome with their durations (observed
 * from the git runner, process-wide) and the bytes moved by smart HTTP, which the returned
 * recorder counts.
 */
function registerGitMetrics(registry: client.Registry): Metrics['observeGitTransfer'] {
  const gitCommands = new client.Counter({
    name: 'gitloom_git_commands_total',
    help: 'git processes run, by subcommand and outcome',
    labelNames: ['command', 'outcome'],
    registers: [registry],
  });
  const gitDuration = new client.Histogram({
    name: 'gitloom_git_command_duration_seconds',
    help: 'Duration of git processes by subcommand',
    labelNames: ['command'],
    buckets: SECONDS,
    registers: [registry],
  });
  const gitBytes = new client.Counter({
    name: 'gitloom_git_transfer_bytes_total',
    help: 'Bytes moved by git smart HTTP: push (received) and fetch (sent, clones included)',
    labelNames: ['direction'],
    registers: [registry],
  });
  configureGit({
    onCommand(args, ms, exitCode) {
      const command = subcommand(args);
      gitCommands.inc({ command, outcome: exitCode === 0 ? 'ok' : 'error' });
      gitDuration.observe({ command }, ms / 1000);
    },
  });
  new client.Gauge({
    name: 'gitloom_git_upload_packs',
    help: 'Clones and fetches: upload-pack processes running and waiting for a slot (GITLOOM_GIT_CONCURRENCY)',
    labelNames: ['state'],
    registers: [registry],
    collect(this: client.Gauge) {
      const load = uploadPackLoad();
      this.set({ state: 'running' }, load.running);
      this.set({ state: 'waiting' }, load.waiting);
    },
  });
  return (direction, bytes) => {
    if (bytes > 0) gitBytes.inc({ direction }, bytes);
  };
}

/** Registers the outbox's send attempts by kind and outcome with their durations; returns their recorder. */
function registerOutboxAttemptMetrics(registry: client.Registry): Metrics['observeOutboxAttempt'] {
  const outboxAttempts = new client.Counter({
    name: 'gitloom_outbox_attempts_total',
    help: 'Webhook and mail send attempts by kind and outcome',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  const outboxDuration = new client.Histogram({
    name: 'gitloom_outbox_attempt_duration_seconds',
    help: 'Duration of outbox send attempts',
    labelNames: ['kind'],
    buckets: SECONDS,
    registers: [registry],
  });
  return (kind, succeeded, ms) => {
    outboxAttempts.inc({ kind, outcome: succeeded ? 'delivered' : 'failed' });
    outboxDuration.observe({ kind }, ms / 1000);
  };
}

/**
 * Registers what is read from the database at each scrape: the journal's and the outbox's lag,
 * the pending messages, the unfinished builds by status, and the durations of the jobs
 * finished since the previous scrape.
 */
function registerBacklogGauges(registry: client.Registry, db: Kysely<Database>): void {
  new client.Gauge({
    name: 'gitloom_journal_lag_seconds',
    help: 'Age of the oldest ref change (push, merge, API edit) whose reactions have not run',
    registers: [registry],
    collect: fromDatabase(async function (this: client.Gauge) {
      this.set((await journalLag(db, Date.now())) / 1000);
    }),
  });
  new client.Gauge({
    name: 'gitloom_outbox_lag_seconds',
    help: 'Age of the oldest outbox event or due message not yet handled',
    registers: [registry],
    collect: fromDatabase(async function (this: client.Gauge) {
      this.set((await outboxLag(db, Date.now())) / 1000);
    }),
  });
  new client.Gauge({
    name: 'gitloom_outbox_pending_messages',
    help: 'Webhook deliveries and mails waiting to be sent (due or backing off)',
    registers: [registry],
    collect: fromDatabase(async function (this: client.Gauge) {
      this.set(await pendingMessageCount(db));
    }),
  });
  new client.Gauge({
    name: 'gitloom_builds',
    help: 'Unfinished builds by status (WAITING, PENDING = queued, RUNNING)',
    labelNames: ['status'],
    registers: [registry],
    collect: fromDatabase(async function (this: client.Gauge) {
      for (const [status, count] of await unfinishedBuildCounts(db)) this.set({ status }, count);
    }),
  });
  // Job durations: builds finished since the previous scrape are observed into the histogram.
  let watermark = Date.now();
  const jobDuration = new client.Histogram({
    name: 'gitloom_build_duration_seconds',
    help: 'Job durations (running to finished) of builds finished while this process ran, by status',
    labelNames: ['status'],
    buckets: JOB_SECONDS,
    registers: [registry],
    collect: fromDatabase(async () => {
      for (const row of await buildsFinishedAfter(db, watermark)) {
        jobDuration.observe({ status: row.status }, (row.finishDate - row.runningDate) / 1000);
        watermark = Math.max(watermark, row.finishDate);
      }
    }),
  });
}

/** Registers the database's health: whether it answered the last statement, and its pool's connections. */
function registerDatabaseGauges(registry: client.Registry, db: Kysely<Database>, poolStats: () => PoolStats): void {
  const availability = availabilityOf(db);
  new client.Gauge({
    name: 'gitloom_database_up',
    help: 'Whether the database answered the last statement (0 during an outage)',
    registers: [registry],
    collect() {
      this.set(availability.downSince === null ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'gitloom_db_pool_connections',
    help: 'Database pool connections by state (total, idle, waiting requests)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = poolStats();
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
}
