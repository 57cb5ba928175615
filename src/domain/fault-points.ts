/**
 * Named crash points for the crash tests (test/http/crash-recovery.test.ts): when the environment
 * variable `GITLOOM_FAULT_POINT` names a point, the process kills itself there with SIGKILL, as
 * a power cut would. Unset in production, where every point is a no-op.
 */

/**
 * The points: `merge-ref-moved` = a merge moved the target branch but has not marked the request
 * merged; `build-finish-written` = a build's final status is written inside its transaction, the
 * BUILD event not yet.
 */
export type FaultPoint = 'merge-ref-moved' | 'build-finish-written';

/** Kills this process (SIGKILL) when `GITLOOM_FAULT_POINT` is `point`; otherwise does nothing. */
export function faultPoint(point: FaultPoint): void {
  if (process.env.GITLOOM_FAULT_POINT === point) process.kill(process.pid, 'SIGKILL');
}
