/**
 * Permission-filtered listing figures (run on demand: `npx tsx bench/access.ts`; PostgreSQL with
 * `GITLOOM_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`):
 * - a user authorized on 1,000 of 10,100 projects (100 groups × 100 projects, rows inserted
 *   directly through Kysely) lists `GET /~api/projects?query=` (first page) and
 *   `GET /~api/pulls?query=open` over 20,000 pull requests (target p50 < 30 ms, ≥ 50 runs);
 * - top contributors of a repository with 10,000 commits (history made with `git fast-import`):
 *   the first call and the cached call.
 * Prints the figures; not part of the tests.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { dialectOf } from '../src/db/dialect.js';
import { startInProcessServer } from './lib.js';

const run = promisify(execFile);
const PASSWORD = 'bench-secret';
const basic = (name: string, password: string) => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
const ADMIN_AUTH = basic('admin', PASSWORD);
const GROUPS = 100;
const PROJECTS_PER_GROUP = 100;
const GRANTS = 1_000;
const PULL_REQUESTS = 20_000;
const COMMITS = 10_000;
const RUNS = 60;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function report(label: string, values: number[], target: string): void {
  console.log(
    `${label.padEnd(60)} p50 ${percentile(values, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(values, 95).toFixed(1).padStart(7)} ms   (n=${values.length})   target ${target}`,
  );
}

/** A fast-import stream of `count` commits on refs/heads/main by 25 authors, one every 10 minutes. */
function history(count: number): string {
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const content = `line ${i}\n`;
    const message = `commit ${i}\n`;
    const author = `dev${i % 25}`;
    const when = 1_700_000_000 + i * 600;
    parts.push(
      'commit refs/heads/main',
      `mark :${i}`,
      `author ${author} <${author}@example.com> ${when} +0000`,
      `committer Bench <bench@example.com> ${when} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message.slice(0, -1),
      ...(i > 1 ? [`from :${i - 1}`] : []),
      `M 100644 inline src/file${i % 200}.txt`,
      `data ${Buffer.byteLength(content)}`,
      content.slice(0, -1),
      '',
    );
  }
  return `${parts.join('\n')}\n`;
}

async function fastImport(repo: string, input: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${repo}`, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}`))));
    child.stdin.end(input);
  });
}

async function main(): Promise<void> {
  const bench = await startInProcessServer('access', PASSWORD, process.env.GITLOOM_BENCH_LOG === '1');
  const { server, dataDir } = bench;
  const call = async (method: string, route: string, auth = ADMIN_AUTH, body?: unknown) => {
    const res = await fetch(`${server.url}/~api${route}`, {
      method,
      headers: { authorization: auth, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const raw = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${raw}`);
    return raw ? JSON.parse(raw) : null;
  };
  const timed = async (route: string, auth: string, runs = RUNS) => {
    const times: number[] = [];
    let result: unknown;
    for (let i = 0; i < runs + 5; i++) {
      const started = performance.now();
      result = await call('GET', route, auth);
      if (i >= 5) times.push(performance.now() - started);
    }
    return { times, result };
  };
  console.log(`Gitloom access figures (${dialectOf(server.services.db).engine === 'postgres' ? 'PostgreSQL' : 'SQLite'})`);
  try {
    const db = server.services.db;
    const userId = (await call('POST', '/users', ADMIN_AUTH, {
      name: 'alice',
      password: 'alice-secret',
      emailAddress: 'alice@example.com',
      fullName: 'Alice',
    })) as number;
    const userAuth = basic('alice', 'alice-secret');
    const { id: roleId } = await db
      .insertInto('roles')
      .values({
        name: 'Bench Developer',
        manageProject: 0,
        createChildren: 0,
        managePullRequests: 0,
        manageCodeComments: 0,
        codePrivilege: 'WRITE',
        manageIssues: 0,
        accessConfidentialIssues: 0,
        scheduleIssues: 0,
        editableIssueFields: '{"@type":"AllIssueFields"}',
        manageBuilds: 0,
        jobPrivileges: '[]',
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    // --- 100 groups × 100 projects; the user is authorized on every 10th project
    let started = performance.now();
    const now = Date.now();
    const base = {
      forkedFromId: null,
      description: null,
      defaultRoleId: null,
      codeManagement: 1,
      issueManagement: 1,
      codeAnalysisSetting: '{"analysisFiles":null}',
      gitPackConfig: '{"windowMemory":null,"packSizeLimit":null,"threads":null,"window":null}',
      setting: null,
      serviceDeskName: null,
      lastCommitDate: null,
    } as const;
    const leafIds: number[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const { id: groupId } = await db
        .insertInto('projects')
        .values({ ...base, parentId: null, name: `group${g}`, path: `group${g}`, createDate: now, lastActivityDate: now - g })
        .returning('id')
        .executeTakeFirstOrThrow();
      const rows = Array.from({ length: PROJECTS_PER_GROUP }, (_, p) => ({
        ...base,
        parentId: groupId,
        name: `project${p}`,
        path: `group${g}/project${p}`,
        createDate: now,
        lastActivityDate: now - g * PROJECTS_PER_GROUP - p,
      }));
      for (const r of await db.insertInto('projects').values(rows).returning('id').execute()) leafIds.push(r.id);
    }
    const granted = leafIds.filter((_, i) => i % (leafIds.length / GRANTS) === 0);
    for (let i = 0; i < granted.length; i += 500) {
      await db
        .insertInto('userAuthorizations')
        .values(granted.slice(i, i + 500).map((projectId) => ({ projectId, userId, roleId })))
        .execute();
    }
    const statuses = ['OPEN', 'MERGED', 'MERGED', 'DISCARDED'] as const;
    for (let offset = 0; offset < PULL_REQUESTS; offset += 1000) {
      const rows = [];
      for (let i = offset; i < offset + 1000; i++) {
        const scope = leafIds[(i * 7) % leafIds.length];
        rows.push({
          numberScopeId: scope,
          number: 1 + i,
          status: statuses[i % statuses.length],
          title: `Change ${i}`,
          description: null,
          submitterId: 1,
          targetProjectId: scope,
          targetBranch: 'main',
          sourceProjectId: scope,
          sourceBranch: `feature/${i}`,
          baseCommitHash: '0'.repeat(40),
          buildCommitHash: null,
          submitDate: now - i * 60_000,
          mergeStrategy: 'CREATE_MERGE_COMMIT' as const,
          uuid: randomUUID(),
          commentCount: 0,
          lastActivityUserId: 1,
          lastActivityDate: now - i * 60_000,
          lastActivityDescription: 'opened',
          codeCommentsUpdateDate: null,
          checkError: null,
          closeDate: null,
          previewTargetHeadCommitHash: null,
          previewHeadCommitHash: null,
          previewMergeStrategy: null,
          previewMergeCommitHash: null,
        });
      }
      await db.insertInto('pullRequests').values(rows).execute();
    }
    await sql`analyze`.execute(db);
    console.log(
      `inserted ${GROUPS * (PROJECTS_PER_GROUP + 1)} projects, ${granted.length} authorizations, ${PULL_REQUESTS} pull requests in ${(performance.now() - started).toFixed(0)} ms`,
    );

    const projects = await timed('/projects?query=&offset=0&count=100', userAuth);
    if ((projects.result as unknown[]).length !== 100) throw new Error('projects: expected a full first page');
    report('GET /projects?query= (first page, 1,000 of 10,100 visible)', projects.times, 'p50 < 30 ms');
    const pulls = await timed(`/pulls?query=${encodeURIComponent('open')}&offset=0&count=100`, userAuth);
    if ((pulls.result as unknown[]).length === 0) throw new Error('pulls: expected open pull requests');
    report('GET /pulls?query=open (first page)', pulls.times, 'p50 < 30 ms');

    // --- top contributors over 10,000 commits
    const projectId = (await call('POST', '/projects', ADMIN_AUTH, { name: 'big' })) as number;
    const repo = path.join(dataDir, 'repos', `${projectId}.git`);
    started = performance.now();
    await fastImport(repo, history(COMMITS));
    await run('git', [`--git-dir=${repo}`, 'symbolic-ref', 'HEAD', 'refs/heads/main']);
    console.log(`history: ${COMMITS} commits imported in ${(performance.now() - started).toFixed(0)} ms`);
    const route = `/projects/${projectId}/top-contributors?type=COMMITS&sinceDate=2023-01-01&untilDate=2025-12-31&count=10`;
    started = performance.now();
    const first = (await call('GET', route)) as unknown[];
    const firstMs = performance.now() - started;
    if (first.length !== 10) throw new Error(`top contributors: expected 10, got ${first.length}`);
    console.log(`${'top contributors, first call (10,000 commits)'.padEnd(60)} ${firstMs.toFixed(1).padStart(11)} ms`);
    const cached = await timed(route, ADMIN_AUTH, 50);
    report('top contributors, cached call', cached.times, 'reported');
  } finally {
    await bench.close();
  }
}

await main();
