import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { givenRepo, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

/** The pull request query language (docs/compatibility.md#pull-requests-query-language), criterion by criterion, over a small world. */
describe('pull request query language', () => {
  let server: TestServer;
  let qa: Repo;
  let other: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let outsider: TestUser;
  const ids: Record<string, number> = {};
  let commitOfOne = '';
  let startedAt = '';

  const query = (text: string, auth?: string) => server.call('GET', `/pulls?query=${encodeURIComponent(text)}`, { auth });
  const names = async (text: string, auth?: string) => {
    const res = await query(text, auth);
    expect(res.status, `${text}: ${res.text}`).toBe(200);
    const byId = Object.fromEntries(Object.entries(ids).map(([k, v]) => [v, k]));
    return (res.json as { id: number }[]).map((p) => byId[p.id]);
  };

  beforeAll(async () => {
    server = await startTestServer();
    startedAt = new Date(Date.now() - 60_000).toISOString();
    const group = (await server.call('POST', '/projects', { body: { name: 'grp' } })).json;
    const child = await server.call('POST', '/projects', { body: { name: 'qa', parentId: group } });
    expect(child.status).toBe(200);
    qa = await givenRepo(server, 'qa-root');
    other = await givenRepo(server, 'other');
    [alice, bob, carol, outsider] = await Promise.all(['alice', 'bob', 'carol', 'outsider'].map((n) => server.createUser(n)));
    for (const u of [alice, bob, carol]) {
      await grantRole(server, qa.id, u.id, 'Code Writer');
      await grantRole(server, other.id, u.id, 'Code Writer');
    }
    const open = async (name: string, repo: Repo, branch: string, target: string, body: Record<string, unknown>, auth?: string) => {
      const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: target, sourceBranch: branch, ...body }, auth);
      expect(res.status, res.text).toBe(200);
      ids[name] = res.json as number;
    };
    commitOfOne = await qa.commitOn('feat/one', { 'one.txt': '1\n' }, 'one');
    await qa.commitOn('develop', { 'dev.txt': 'd\n' }, 'develop base');
    await qa.commitOn('feat/two', { 'two.txt': '2\n' }, 'two', 'develop');
    await qa.commitOn('hotfix', { 'hot.txt': 'h\n' }, 'hot');
    await qa.commitOn('clash', { 'README.md': 'clash on branch\n' }, 'clash');
    await qa.commitOn('main', { 'README.md': 'clash on main\n' }, 'clash on main');
    await other.commitOn('x', { 'x.txt': 'x\n' }, 'x');
    const issue = (await server.call('POST', '/issues', { body: { projectId: qa.id, title: 'Login broken' } })).json;
    const issueNumber = (await server.call('GET', `/issues/${issue}`)).json.number;

    await open(
      'one',
      qa,
      'feat/one',
      'main',
      {
        title: 'Fix login crash',
        description: 'details about the timeout, cc @carol',
        mergeStrategy: 'SQUASH_SOURCE_BRANCH_COMMITS',
        reviewerIds: [bob.id],
        assigneeIds: [carol.id],
      },
      alice.auth,
    );
    await open('two', qa, 'feat/two', 'develop', { title: `Add docs, closes #${issueNumber}`, reviewerIds: [alice.id] }, bob.auth);
    await open('three', qa, 'hotfix', 'main', { title: 'Hotfix timeout', reviewerIds: [carol.id] });
    await open('four', other, 'x', 'main', { title: 'Other project thing' }, carol.auth);
    await open('five', qa, 'clash', 'main', { title: 'Clashing change', mergeStrategy: 'CREATE_MERGE_COMMIT_IF_NECESSARY' });

    const review = async (name: string, user: TestUser, status: string) => {
      const r = (await server.call('GET', `/pulls/${ids[name]}/reviews`)).json.find((x: { userId: number }) => x.userId === user.id);
      expect((await server.call('POST', `/pull-request-reviews/${r.id}`, { body: { status }, auth: user.auth })).status).toBe(200);
    };
    await review('two', alice, 'APPROVED');
    await review('three', carol, 'REQUESTED_FOR_CHANGES');
    await server.call('POST', '/pull-request-comments', { body: { requestId: ids.one, content: 'please add tests' }, auth: bob.auth });
    await server.call('POST', '/pull-request-comments', { body: { requestId: ids.one, content: 'second note' }, auth: bob.auth });
    await server.call('POST', '/pull-request-comments', { body: { requestId: ids.four, content: 'ok' }, auth: alice.auth });
    const spec = (await server.call('POST', '/label-specs', { body: { name: 'bug' } })).json;
    await server.call('POST', '/pull-request-labels', { body: { requestId: ids.four, specId: spec } });
    expect((await server.call('POST', `/pulls/${ids.two}/merge`, { text: '' })).status).toBe(200);
    expect((await server.call('POST', `/pulls/${ids.three}/discard`, { text: '' })).status).toBe(200);
    expect((await server.call('GET', `/pulls/${ids.five}/merge-preview`)).json.mergeCommitHash).toBeNull();
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  it('criteria: every operator and field', async () => {
    const table: [string, string[], TestUser?][] = [
      ['open', ['five', 'four', 'one']],
      ['merged', ['two']],
      ['discarded', ['three']],
      ['"Status" is "merged"', ['two']],
      ['"Status" is "Discarded"', ['three']],
      ['assigned to "carol"', ['one']],
      ['assigned to me', ['one'], carol],
      ['submitted by "alice"', ['one']],
      ['submitted by me', ['four'], carol],
      ['commented by "bob"', ['one']],
      ['commented by me', ['four'], alice],
      ['to be reviewed by "bob"', ['one']],
      ['to be reviewed by me', ['one'], bob],
      ['approved by "alice"', ['two']],
      ['approved by me', ['two'], alice],
      ['requested for changes by "carol"', ['three']],
      ['requested for changes by me', ['three'], carol],
      ['mentioned "carol"', ['one']],
      ['mentioned me', ['one'], carol],
      ['someone requested for changes', ['three']],
      ['has pending reviews', ['one']],
      ['has failed builds', []],
      ['to be verified by builds', []],
      ['has merge conflicts', ['five']],
      [`includes commit "qa-root:${commitOfOne}"`, ['one']],
      ['includes commit "qa-root:feat/one"', ['one']],
      ['includes issue "qa-root#1"', ['two']],
      ['"Number" is "qa-root#1"', ['one']],
      ['"Number" is greater than "qa-root#3"', ['five']],
      ['"Number" is less than "qa-root#2"', ['one']],
      ['#1', ['four', 'one']],
      ['1 and open', ['four', 'one']],
      ['"Title" contains "login"', ['one']],
      ['"Title" contains "fix*crash"', ['one']],
      ['"Description" contains "TIMEOUT"', ['one']],
      ['"Comment" contains "add tests"', ['one']],
      ['"Target Project" is "qa-*"', ['five', 'three', 'two', 'one']],
      ['"Source Project" is "other"', ['four']],
      ['"Target Branch" is "develop"', ['two']],
      ['"Target Branch" is "MAIN" and "Source Branch" is "feat/*"', ['one']],
      ['"Source Branch" is "hot*"', ['three']],
      ['"Label" is "bug"', ['four']],
      ['"Merge Strategy" is "Squash Source Branch Commits"', ['one']],
      ['"Merge Strategy" is "CREATE_MERGE_COMMIT_IF_NECESSARY"', ['five']],
      ['"Comment Count" is "2"', ['one']],
      ['"Comment Count" is greater than "0"', ['four', 'one']],
      ['"Comment Count" is less than "1"', ['five', 'three', 'two']],
      [`"Submit Date" is since "${startedAt.slice(0, 19).replace('T', ' ')}"`, ['five', 'four', 'three', 'two', 'one']],
      ['"Submit Date" is until "yesterday"', []],
      ['"Last Activity Date" is since "today"', ['five', 'four', 'three', 'two', 'one']],
      ['"Close Date" is since "today"', ['three', 'two']],
      ['"Close Date" is until "2000-01-01"', []],
      ['~login crash~', ['one']],
      ['~tests~', ['one']],
      ['~timeout~', ['three', 'one']],
      ['not (open) and "Target Branch" is "main"', ['three']],
      ['merged or discarded', ['three', 'two']],
      ['open and (submitted by "alice" or submitted by "carol")', ['four', 'one']],
    ];
    for (const [text, expected, user] of table) {
      const got = await names(`${text} order by "Number" desc`, user?.auth);
      expect([text, got.sort()]).toEqual([text, [...expected].sort()]);
    }
  });

  it('orders: every sort field, both directions, and the default order', async () => {
    const byId = (list: string[]) => list;
    expect(await names('order by "Number" asc and "Target Project" asc')).toEqual(['one', 'four', 'two', 'three', 'five']);
    expect(byId(await names('"Target Project" is "qa-root" order by "Number" desc'))).toEqual(['five', 'three', 'two', 'one']);
    expect(await names('order by "Submit Date" asc')).toEqual(['one', 'two', 'three', 'four', 'five']);
    expect(await names('order by "Submit Date" desc')).toEqual(['five', 'four', 'three', 'two', 'one']);
    expect((await names('order by "Status" asc and "Number" asc and "Submit Date" asc')).slice(0, 3)).toEqual(['one', 'four', 'five']);
    expect((await names('order by "Status" desc and "Number" asc'))[0]).toBe('three');
    expect(await names('order by "Comment Count" desc and "Submit Date" asc')).toEqual(['one', 'four', 'two', 'three', 'five']);
    expect((await names('order by "Target Branch" asc and "Submit Date" asc'))[0]).toBe('two');
    expect((await names('order by "Source Branch" asc'))[0]).toBe('five');
    expect((await names('order by "Source Project" desc and "Number" asc'))[0]).toBe('four');
    expect((await names('order by "Target Project" asc and "Number" asc')).at(-1)).toBe('four');
    expect((await names('order by "Last Activity Date" asc')).at(-1)).toBe('three');
    const defaultOrder = await names('');
    expect(defaultOrder).toEqual(await names('order by "Last Activity Date" desc'));
    expect(defaultOrder[0]).toBe('three');
  });

  it('errors name what and where; permissions filter in SQL; paging', async () => {
    const errors: [string, RegExp | string][] = [
      ['"Foo" is "x"', 'Field not found: Foo'],
      ['"Title" is "x"', "Field 'Title' is not applicable for operator 'is'"],
      ['open and and', /column/],
      ['submitted by "nobody"', 'Unable to find user with login: nobody'],
      ['"Number" is "#5"', 'Project is not specified'],
      ['"Number" is "nope#5"', 'Unable to find project: nope'],
      ['"Status" is "Closed"', 'Invalid status: Closed'],
      ['"Merge Strategy" is "Fast"', 'Invalid merge strategy: Fast'],
      ['"Submit Date" is since "someday soon"', 'Unrecognized date: someday soon'],
      ['"Comment Count" is "many"', /Invalid integer/],
      ['order by "Title"', 'Can not order by field: Title'],
      ['includes commit "qa-root:nothere"', 'Unable to find revision: nothere'],
      ['includes issue "qa-root#99"', 'Unable to find issue: qa-root#99'],
    ];
    for (const [text, detail] of errors) {
      const res = await query(text);
      expect(res.status, text).toBe(400);
      if (typeof detail === 'string') expect(res.json.detail, text).toBe(detail);
      else expect(res.json.detail, text).toMatch(detail);
    }
    expect((await query('open', null as unknown as string)).status).toBe(401);
    expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } })).status).toBe(200);
    try {
      const anonymous = await query('submitted by me', null as unknown as string);
      expect([anonymous.status, anonymous.json.detail]).toEqual([400, 'Please login to perform this query']);
      expect((await query('open', null as unknown as string)).json).toEqual([]);
    } finally {
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
    }
    expect((await server.call('GET', '/pulls?count=101')).status).toBe(400);
    expect((await server.call('GET', '/pulls?bogus=1')).status).toBe(400);
    expect(await names('', outsider.auth)).toEqual([]);
    await grantRole(server, other.id, outsider.id, 'Code Reader');
    expect(await names('', outsider.auth)).toEqual(['four']);
    const first = (await server.call('GET', '/pulls?query=order%20by%20%22Number%22%20asc&offset=0&count=2')).json.map((p: { id: number }) => p.id);
    const second = (await server.call('GET', '/pulls?query=order%20by%20%22Number%22%20asc&offset=2&count=2')).json.map((p: { id: number }) => p.id);
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(2);
    expect(first.filter((id: number) => second.includes(id))).toEqual([]);
  });
});
