import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, removeWorkTrees, type Repo } from '../helpers/fixtures.js';
import { ADMIN, basic, git, startTestServer, type TestServer } from '../helpers/server.js';
import { answersWhile } from '../helpers/responsive.js';

/**
 * `a/a/a/…!`: a path-like run that no `#` ends, as long as a comment may be (100,000
 * characters). A regular expression that may start a reference at every `/` re-read the rest of
 * the run from each: 40,000 characters took 4.3 s, this about ten times as long.
 */
const PATHS = `${'a/'.repeat(49_999)}!`;
/** The same behind a keyword, and dashes for slashes. */
const KEYWORD_PATHS = `see issue ${'a-'.repeat(49_990)}!`;
/** A mention followed by dots: `/\.+$/` re-read the dots from each of them. */
const DOTS = `@a${'.'.repeat(99_990)}b`;
/** A megabyte of the same in a commit message (messages have no length limit), behind fix keywords. */
const FIX_PATHS = `Hostile\n\nfixes ${'a/'.repeat(250_000)}!\nresolves: issue ${'a.'.repeat(100_000)}!\n(${'a/'.repeat(100_000)}!)\n${KEYWORD_PATHS}`;
/** A body with a long run of newlines inside: `/\n+$/` re-read the run from each of them. */
const NEWLINES = `Hostile\n\nbody\n${'\n'.repeat(1_000_000)}x`;

type Data = Record<string, unknown> & { '@type': string };

/**
 * References, mentions and fix references are found in time linear in the text (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input):
 * a comment, a description or a pushed commit message of a megabyte keeps the server answering,
 * and ordinary references are still found and linked. Server and client share one event loop
 * here, so a blocked server also keeps the client's deadline timers from firing until it lets
 * go: a deadline that fires at all fails the test.
 */
describe('references in hostile texts', () => {
  let server: TestServer;
  let repo: Repo;
  let web: WebSession;
  let target: number;
  let talk: number;
  const adminAuth = basic(ADMIN.name, ADMIN.password);

  const meWhile = <T>(work: Promise<T>): Promise<T> => answersWhile(server, work);

  /** An API call with a deadline long enough for a megabyte, far too short for quadratic work. */
  async function call(method: string, route: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
    const res = await fetch(`${server.api}${route}`, {
      method,
      headers: { authorization: adminAuth, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, text, json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  }

  const referenceChanges = async (issueId: number): Promise<Data[]> => {
    const res = await call('GET', `/issues/${issueId}/changes`);
    expect(res.status, res.text).toBe(200);
    return (res.json as { data: Data }[]).map((c) => c.data).filter((d) => d['@type'].includes('ReferencedFrom'));
  };
  const newIssue = async (title: string, description?: string): Promise<number> => {
    const res = await call('POST', '/issues', { projectId: repo.id, title, description });
    expect(res.status, res.text).toBe(200);
    return res.json;
  };
  const openPull = async (sourceBranch: string): Promise<number> => {
    const res = await call('POST', '/pulls', { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch, title: sourceBranch });
    expect(res.status, res.text).toBe(200);
    return res.json;
  };
  const fixedIssueIds = async (requestId: number): Promise<number[]> => {
    const res = await call('GET', `/pulls/${requestId}/fixed-issue-ids`);
    expect(res.status, res.text).toBe(200);
    return res.json;
  };
  const issuePage = async (number: number): Promise<string> => {
    const res = await fetch(`${server.url}/scan/~issues/${number}`, { headers: { cookie: web.cookie }, signal: AbortSignal.timeout(20_000) });
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'scan');
    web = await signInByFetch(server, ADMIN.name, ADMIN.password);
    target = await newIssue('Target'); // scan#1
    talk = await newIssue('Talk'); // scan#2
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('issue comments and a description of a megabyte keep the server answering, and so does their page', async () => {
    for (const content of [PATHS, KEYWORD_PATHS, DOTS]) {
      const comment = await meWhile(call('POST', '/issue-comments', { issueId: talk, content }));
      expect(comment.status, comment.text.slice(0, 200)).toBe(200);
    }
    const hostile = await meWhile(newIssue('Hostile', PATHS));
    expect(await meWhile(issuePage(2))).toContain('a/a/a/');
    expect(await meWhile(issuePage(3))).toContain('a/a/a/');
    // none of them is a reference
    expect(await referenceChanges(target)).toEqual([]);
    expect((await call('GET', `/issues/${hostile}`)).json.number).toBe(3);
  });

  /** Commits on `branch`, made from `from`, with `message` (too long for a command line) and pushes it. */
  async function pushMessage(branch: string, message: string, from = 'main'): Promise<void> {
    const file = path.join(repo.work, '..', `${path.basename(repo.work)}-message`);
    await fs.writeFile(file, message);
    await git(repo.work, ['checkout', '-q', '-B', branch, from]);
    await fs.appendFile(path.join(repo.work, `${branch}.txt`), `${branch}\n`);
    await git(repo.work, ['add', '-A']);
    await git(repo.work, ['commit', '-q', '--cleanup=verbatim', '-F', file]);
    await fs.rm(file);
    await git(repo.work, ['push', '-q', repo.remote, branch]);
  }

  it('a pushed commit message of a megabyte of fix-pattern text keeps the server answering', async () => {
    await meWhile(pushMessage('hostile', FIX_PATHS).then(() => server.settled()));
    const request = await meWhile(openPull('hostile'));
    expect(await meWhile(fixedIssueIds(request))).toEqual([]);
    expect(await referenceChanges(target)).toEqual([]);
  });

  it('a commit message with a megabyte of newlines keeps the server answering while a protected branch checks it', async () => {
    const setting = (await call('GET', `/projects/${repo.id}/setting`)).json;
    const rule = { branches: 'guarded', userMatch: 'anyone', preventCreation: false, maxCommitMessageLineLength: 100 };
    expect((await call('POST', `/projects/${repo.id}/setting`, { ...setting, branchProtections: [rule] })).status).toBe(200);
    await meWhile(pushMessage('guarded', NEWLINES).then(() => server.settled()));
    expect(await repo.head('guarded')).toBe((await git(repo.work, ['rev-parse', 'guarded'])).trim());
    // the control: the rule does check the messages pushed to the branch
    await expect(pushMessage('guarded', `Hostile\n\n${'long '.repeat(30)}`, 'guarded')).rejects.toThrow(/Line 3: Length exceeds 100/);
  });

  it('the controls: ordinary references are found, recorded, linked and fix their issue', async () => {
    const comment = await call('POST', '/issue-comments', { issueId: talk, content: 'Duplicate of a/#1? See scan#1 and issue #1; not `#1`, not build #1' });
    expect(comment.status, comment.text).toBe(200);
    expect(await referenceChanges(target)).toEqual([{ '@type': 'IssueReferencedFromIssueData', issueId: talk }]);
    const page = await issuePage(2);
    expect(page).toContain('<a class="reference" href="/scan/~issues/1" rel="nofollow noopener">scan#1</a>');
    expect(page).toContain('<a class="reference" href="/scan/~issues/1" rel="nofollow noopener">issue #1</a>');
    expect(page).toContain('a/<a class="reference" href="/scan/~issues/1" rel="nofollow noopener">#1</a>?');

    const fixing = await repo.commitOn('fix', { 'f.txt': 'f\n' }, 'Repair the target\n\nfixes #1');
    await server.settled();
    const request = await openPull('fix');
    expect(await eventually(async () => (await fixedIssueIds(request)).length > 0)).toBe(true);
    expect(await fixedIssueIds(request)).toEqual([target]);
    expect(await referenceChanges(target)).toContainEqual({ '@type': 'IssueReferencedFromCommitData', projectId: repo.id, commitHash: fixing });
  });

  it('a comment nested too deeply for the markdown reader is stored, its references read from the plain text, and its page renders', async () => {
    const deep = await newIssue('Deep'); // scan#4
    const comment = await call('POST', '/issue-comments', { issueId: deep, content: `${'>'.repeat(20_000)} see #1, @admin` });
    expect(comment.status, comment.text).toBe(200);
    expect(await referenceChanges(target)).toContainEqual({ '@type': 'IssueReferencedFromIssueData', issueId: deep });
    expect(await issuePage(4)).toContain('&gt;&gt;&gt; see #1, @admin</pre>');
  });

  it('a comment and a commit message naming thousands of issues are stored, and the issues that exist are referenced', async () => {
    const many = await newIssue('Many'); // scan#5
    const numbers = Array.from({ length: 15_000 }, (_, i) => i + 1);
    const comment = await meWhile(call('POST', '/issue-comments', { issueId: many, content: numbers.map((n) => `#${n}`).join(' ') }));
    expect(comment.status, comment.text).toBe(200);
    expect(await referenceChanges(target)).toContainEqual({ '@type': 'IssueReferencedFromIssueData', issueId: many });

    await meWhile(pushMessage('many', `Many\n\n${numbers.map((n) => `fixes #${n}`).join('\n')}`).then(() => server.settled()));
    const request = await openPull('many');
    const all = (await call('GET', `/issues?query=&offset=0&count=100`)).json.map((i: { id: number }) => i.id);
    expect([...(await fixedIssueIds(request))].sort((a, b) => a - b)).toEqual([...all].sort((a: number, b: number) => a - b));
  });
});
