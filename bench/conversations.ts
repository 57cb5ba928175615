/**
 * Conversation query figures (run on demand: `npx tsx bench/conversations.ts`; PostgreSQL with
 * `GITLOOM_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`):
 * - `GET /~api/issues?query="State" is "Open" and ~crash~ order by "Vote Count" desc` over 100,000
 *   issues inserted directly through Kysely (target p50 < 50 ms);
 * - `GET /~api/code-comments?pullRequestId=…` for a pull request with 10,000 code comments (p50).
 * Prints the figures; not part of the tests.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { dialectOf } from '../src/db/dialect.js';
import { startInProcessServer } from './lib.js';

const PASSWORD = 'bench-secret';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const ISSUES = 100_000;
const CODE_COMMENTS = 10_000;
const RUNS = 50;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function report(label: string, values: number[], target: string): void {
  console.log(
    `${label.padEnd(72)} p50 ${percentile(values, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(values, 95).toFixed(1).padStart(7)} ms   (n=${values.length})   target ${target}`,
  );
}

async function main(): Promise<void> {
  const bench = await startInProcessServer('conversations', PASSWORD);
  const { server, dataDir } = bench;
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}/~api${route}`, {
      method,
      headers: { authorization: AUTH, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const raw = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${raw}`);
    return raw ? JSON.parse(raw) : null;
  };
  const timed = async (route: string) => {
    const times: number[] = [];
    let result: unknown;
    for (let i = 0; i < RUNS + 5; i++) {
      const started = performance.now();
      result = await call('GET', route);
      if (i >= 5) times.push(performance.now() - started);
    }
    return { times, result: result as unknown[] };
  };
  console.log(`Gitloom conversation figures (${dialectOf(server.services.db).engine === 'postgres' ? 'PostgreSQL' : 'SQLite'})`);
  try {
    const db = server.services.db;
    const projectIds: number[] = [];
    for (let i = 0; i < 10; i++) projectIds.push((await call('POST', '/projects', { name: `p${i}` })) as number);
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const vocabulary = Array.from({ length: 20_000 }, () =>
      Array.from({ length: 5 + Math.floor(random() * 5) }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join(''),
    );
    const word = (n: number) => vocabulary[n % vocabulary.length];
    const now = Date.now();
    let started = performance.now();
    for (let offset = 0; offset < ISSUES; offset += 1000) {
      const rows = [];
      for (let i = offset; i < offset + 1000; i++) {
        const projectId = projectIds[i % projectIds.length];
        // about 1 issue in 200 mentions a crash in its title
        const title = i % 200 === 0 ? `App crashes when ${word(i * 3)}` : `${word(i * 31)} ${word(i * 97 + 5)} ${word(i * 7 + 11)}`;
        rows.push({
          numberScopeId: projectId,
          number: 1 + Math.floor(i / projectIds.length),
          projectId,
          state: i % 3 === 0 ? 'Closed' : 'Open',
          title,
          description: i % 2 === 0 ? `Steps: ${word(i * 13 + 3)} then ${word(i * 17 + 1)}` : null,
          submitterId: 1,
          submitDate: now - i * 60_000,
          voteCount: (i * 7919) % 50,
          commentCount: 0,
          uuid: randomUUID(),
          threadingReference: null,
          lastActivityUserId: 1,
          lastActivityDate: now - i * 60_000,
          lastActivityDescription: 'opened',
          confidential: 0,
          pinDate: null,
        });
      }
      await db.insertInto('issues').values(rows).execute();
    }
    console.log(`inserted ${ISSUES} issues in ${(performance.now() - started).toFixed(0)} ms`);

    started = performance.now();
    const { id: requestId } = await db
      .insertInto('pullRequests')
      .values({
        numberScopeId: projectIds[0],
        number: 1,
        status: 'OPEN',
        title: 'Big review',
        description: null,
        submitterId: 1,
        targetProjectId: projectIds[0],
        targetBranch: 'main',
        sourceProjectId: projectIds[0],
        sourceBranch: 'feature',
        baseCommitHash: '0'.repeat(40),
        buildCommitHash: null,
        submitDate: now,
        mergeStrategy: 'CREATE_MERGE_COMMIT',
        uuid: randomUUID(),
        commentCount: 0,
        lastActivityUserId: 1,
        lastActivityDate: now,
        lastActivityDescription: 'opened',
        codeCommentsUpdateDate: null,
        checkError: null,
        closeDate: null,
        previewTargetHeadCommitHash: null,
        previewHeadCommitHash: null,
        previewMergeStrategy: null,
        previewMergeCommitHash: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (let offset = 0; offset < CODE_COMMENTS; offset += 1000) {
      const rows = [];
      for (let i = offset; i < offset + 1000; i++) {
        rows.push({
          projectId: projectIds[0],
          userId: 1,
          content: `Consider ${word(i * 11)} here`,
          createDate: now - i * 1000,
          lastActivityUserId: 1,
          lastActivityDate: now - ((i * 7919) % CODE_COMMENTS) * 1000,
          lastActivityDescription: 'created',
          replyCount: 0,
          markCommitHash: 'a'.repeat(40),
          markPath: `src/file${i % 300}.ts`,
          markFromRow: i % 100,
          markFromColumn: 0,
          markToRow: (i % 100) + 1,
          markToColumn: 10,
          markTabWidth: 4,
          resolved: i % 4 === 0 ? 1 : 0,
          uuid: randomUUID(),
          comparePullRequestId: requestId,
          compareOldCommitHash: 'b'.repeat(40),
          compareNewCommitHash: 'a'.repeat(40),
          comparePathFilter: null,
          compareCurrentFile: null,
          compareWhitespaceOption: 'IGNORE_NONE',
        });
      }
      await db.insertInto('codeComments').values(rows).execute();
    }
    console.log(`inserted ${CODE_COMMENTS} code comments in ${(performance.now() - started).toFixed(0)} ms`);
    await sql`analyze`.execute(db);

    const query = '"State" is "Open" and ~crash~ order by "Vote Count" desc';
    const issues = await timed(`/issues?query=${encodeURIComponent(query)}&offset=0&count=100`);
    if (issues.result.length === 0) throw new Error('issues: expected matches');
    report(`issues ${query}`, issues.times, 'p50 < 50 ms');
    const comments = await timed(`/code-comments?pullRequestId=${requestId}&offset=0&count=100`);
    if (comments.result.length !== 100) throw new Error('code comments: expected a full page');
    report('code comments of a pull request with 10,000 (first page)', comments.times, 'reported');
    const unresolved = await timed(`/code-comments?pullRequestId=${requestId}&query=${encodeURIComponent('unresolved')}&offset=0&count=100`);
    report('code comments, query unresolved (first page)', unresolved.times, 'reported');
  } finally {
    await bench.close();
  }
}

await main();
