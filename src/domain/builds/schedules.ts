/**
 * `!ScheduleTrigger` (docs/compatibility.md#builds-triggers): jobs whose schedule trigger
 * matches the default branch's build spec run on the default-branch head (`refs/heads/<default>`,
 * reason `Scheduled`) at each Quartz cron time. Each process keeps the schedules of every
 * project in memory (refreshed when a push of this process moves refs, and every minute for
 * pushes received by other processes); a fire time is claimed in `build_schedule_fires` so only
 * one process submits it.
 */
import { DatabaseUnavailable } from '../../db/availability.js';
import { fireTimesBetween } from '../../ci/cron.js';
import { matchTriggers, type TriggerMatch } from '../../ci/triggers.js';
import { branchHead, getDefaultBranch } from '../../git/refs.js';
import type { Context } from '../context.js';
import { allProjectIds, findProjectRow } from '../projects/index.js';
import { specAt } from './spec.js';
import { newPipeline, submitBuild, triggeredRequest } from './submit.js';

interface ProjectSchedule {
  commit: string;
  matches: { match: TriggerMatch; cron: string }[];
}

/** How long claimed fire times are kept (they only guard against a second process). */
const FIRE_RETENTION_MS = 24 * 3600_000;
const FULL_REFRESH_MS = 60_000;

/**
 * Evaluates schedule triggers once per `intervalMs` (default 1000: cron expressions have
 * seconds). `start()`/`stop()` follow the build scheduler.
 */
export class ScheduleRunner {
  private readonly schedules = new Map<number, ProjectSchedule>();
  private readonly dirty = new Set<number>();
  private last = 0;
  private refreshedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    private readonly ctx: Context,
    private readonly onError: (error: unknown) => void,
    private readonly intervalMs = 1000,
  ) {}

  /** Starts evaluating; fire times before now are never run (no catch-up after downtime). */
  start(): void {
    this.stopped = false;
    this.last = this.ctx.now();
    this.refreshedAt = 0;
    this.schedule();
  }

  /** Stops evaluating; resolves when the current evaluation finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** The refs of a project moved: re-read its default branch spec at the next evaluation. */
  projectChanged(projectId: number): void {
    this.dirty.add(projectId);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      // an unavailable database is logged once per outage (src/db/availability.ts), not per tick
      this.running = this.tick()
        .catch((e) => {
          if (!(e instanceof DatabaseUnavailable)) this.onError(e);
        })
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.intervalMs);
  }

  private async tick(): Promise<void> {
    const now = this.ctx.now();
    if (now - this.refreshedAt >= FULL_REFRESH_MS) {
      this.refreshedAt = now;
      this.dirty.clear();
      const projectIds = await allProjectIds(this.ctx.db);
      this.schedules.clear();
      for (const id of projectIds) await this.refresh(id);
      await this.ctx.db
        .deleteFrom('buildScheduleFires')
        .where('fireTime', '<', now - FIRE_RETENTION_MS)
        .execute();
    } else {
      for (const id of [...this.dirty]) {
        this.dirty.delete(id);
        await this.refresh(id);
      }
    }
    const after = this.last;
    this.last = now;
    for (const [projectId, schedule] of this.schedules) {
      for (const { match, cron } of schedule.matches) {
        const times = fireTimesBetween(cron, after, now);
        if (times.length === 0) continue;
        await this.fire(projectId, schedule.commit, match, times[times.length - 1]).catch((e) => this.onError(e));
      }
    }
  }

  private async refresh(projectId: number): Promise<void> {
    this.schedules.delete(projectId);
    try {
      const project = await findProjectRow(this.ctx.db, projectId);
      if (!project) return;
      const repo = this.ctx.repoPath(projectId);
      const branch = await getDefaultBranch(repo);
      if (!branch) return;
      const commit = await branchHead(repo, branch);
      if (!commit) return;
      const spec = await specAt(repo, commit);
      if (spec.kind !== 'valid') return;
      const matches = matchTriggers(spec.spec, { kind: 'schedule', projectPath: project.path, branch }).flatMap((match) =>
        match.trigger.type === 'ScheduleTrigger' ? [{ match, cron: match.trigger.cronExpression }] : [],
      );
      if (matches.length > 0) this.schedules.set(projectId, { commit, matches });
    } catch (error) {
      // A missing repository (project being deleted) or a git failure: no schedule for now.
      this.onError(error);
    }
  }

  /** Claims the fire time (one process wins) and submits the job with each param set (a refused one gives a FAILED build). */
  private async fire(projectId: number, commit: string, match: TriggerMatch, fireTime: number): Promise<void> {
    const claimed = await this.ctx.db
      .insertInto('buildScheduleFires')
      .values({ projectId, jobName: match.job.name, fireTime })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!claimed) return;
    const pipeline = newPipeline();
    for (const params of match.paramSets) {
      await submitBuild(this.ctx, triggeredRequest(match, params, { projectId, commitHash: commit, refName: match.refName!, requestId: null, pipeline }));
    }
  }
}
