/**
 * Notification inbox figures (docs/compatibility.md#notification-inbox; run on demand:
 * `npx tsx bench/inbox.ts`, PostgreSQL with `GITLOOM_BENCH_DATABASE_URL=postgres://…`): one user
 * with 10,000 notifications (one per thread, a third unread, some done), inserted directly
 * through Kysely. Server time (`app.inject`) of the inbox page (target p50 < 20 ms), its unread
 * filter, the API's list, and a page's header count — each beside the bare query it rests on,
 * run on the same database handle (the floor).
 */
import { startInProcessServer, percentile } from './lib.js';

const PASSWORD = 'bench-secret';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const NOTIFICATIONS = 10_000;
const WARMUP = 20;
const RUNS = 200;
const ADMIN_ID = 1;

async function sample(run: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const start = performance.now();
    await run();
    if (i >= WARMUP) times.push(performance.now() - start);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

function row(label: string, { p50, p99 }: { p50: number; p99: number }): void {
  console.log(`${label.padEnd(56)} ${`${p50.toFixed(2)} ms`.padStart(10)} ${`${p99.toFixed(2)} ms`.padStart(10)}`);
}

const bench = await startInProcessServer('inbox', PASSWORD);
try {
  const { app, services } = bench.server;
  const db = services.db;
  const created = await app.inject({ method: 'POST', url: '/~api/projects', headers: { authorization: AUTH }, payload: { name: 'bench' } });
  const projectId = Number(created.body);
  const now = Date.now();
  const rows = Array.from({ length: NOTIFICATIONS }, (_, i) => ({
    userId: ADMIN_ID,
    projectId,
    subjectType: i % 3 === 0 ? 'Issue' : 'PullRequest',
    subjectId: i + 1,
    title: `Thread ${i} with a title of some length`,
    url: `/bench/~issues/${i + 1}`,
    reason: ['mention', 'comment', 'review_requested', 'author', 'subscribed'][i % 5],
    unread: i % 3 === 0 ? 1 : 0,
    done: i % 10 === 0 ? 1 : 0,
    updatedDate: now - i * 60_000,
    lastReadDate: null,
  }));
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('notifications')
      .values(rows.slice(i, i + 500))
      .execute();

  const page = (url: string) => async () => {
    const response = await app.inject({ method: 'GET', url, headers: { authorization: AUTH } });
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body.slice(0, 200)}`);
  };
  const base = () => db.selectFrom('notifications').selectAll().where('userId', '=', ADMIN_ID).where('done', '=', 0);
  const engine = process.env.GITLOOM_BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`inbox of ${NOTIFICATIONS} notifications, ${RUNS} sequential requests after ${WARMUP} warm-up, ${engine}; target: inbox page p50 < 20 ms`);
  console.log(`${''.padEnd(56)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}`);
  row('GET /~inbox (all, unread first, 25 rows)', await sample(page('/~inbox')));
  row('  bare query: 25 rows unread first', await sample(() => base().orderBy('unread', 'desc').orderBy('updatedDate', 'desc').limit(26).execute()));
  row('GET /~inbox?query=unread', await sample(page('/~inbox?query=unread')));
  row('GET /~inbox?query=mentions', await sample(page('/~inbox?query=mentions')));
  row('GET /~api/notifications?all=true (50 rows)', await sample(page('/~api/notifications?all=true')));
  row('  bare query: 50 rows by update', await sample(() => base().orderBy('updatedDate', 'desc').limit(50).execute()));
  row('GET /~my/notifications (a page with the header count)', await sample(page('/~my/notifications')));
  row(
    '  bare query: the unread count',
    await sample(() =>
      base()
        .clearSelect()
        .select((eb) => eb.fn.countAll().as('n'))
        .where('unread', '=', 1)
        .execute(),
    ),
  );
} finally {
  await bench.close();
}
