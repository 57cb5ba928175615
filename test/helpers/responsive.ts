import { expect } from 'vitest';
import { ADMIN, basic, type TestServer } from './server.js';

/**
 * Runs `GET /~api/users/me` on `server`, one call after the other, until `work` settles, and
 * expects each to answer 200 within 10 s; resolves with `work`'s outcome. What hostile-input
 * tests use to show the server stays responsive (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input). The server shares the test's
 * event loop, so a blocked server also keeps the deadline's timer from firing until it lets go: a
 * deadline that fires at all fails the test. The deadline is far above what a call takes on a busy
 * machine and far below what the quadratic work these tests guard against takes (minutes).
 *
 * @throws Error naming the deadline when a call gets no answer within 10 s.
 */
export async function answersWhile<T>(server: TestServer, work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => (done = true));
  // when a call below fails, the test ends before `work` does: its outcome is no longer news
  settled.catch(() => undefined);
  do {
    let status: number;
    try {
      const res = await fetch(`${server.api}/users/me`, { headers: { authorization: basic(ADMIN.name, ADMIN.password) }, signal: AbortSignal.timeout(10_000) });
      await res.text();
      status = res.status;
    } catch (error) {
      throw new Error(`GET /~api/users/me gave no answer within 10 s: ${String(error)}`);
    }
    expect(status).toBe(200);
  } while (!done);
  return settled;
}
