import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitSuggestions, suggestionOf } from '../../src/domain/code-comments/suggestions.js';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { git, startTestServer, type TestServer } from '../helpers/server.js';

const CALC = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('suggestion blocks in code comments', () => {
  it('splits Markdown and suggestion blocks, an empty block deleting the lines', () => {
    expect(splitSuggestions('Better:\r\n```suggestion\r\nreturn b + a;\r\n```\r\nThanks')).toEqual([
      { kind: 'text', text: 'Better:' },
      { kind: 'suggestion', lines: ['return b + a;'] },
      { kind: 'text', text: 'Thanks' },
    ]);
    expect(suggestionOf('```suggestion\n```')).toEqual([]);
    expect(suggestionOf('```ts\nnot one\n```')).toBeNull();
    expect(suggestionOf('```suggestion\nunclosed')).toEqual(['unclosed']);
  });
});

/** Suggested changes over HTTP (docs/compatibility.md#suggested-changes): shown, applied one or several in a commit, refused. */
describe('suggested changes on the changes tab', () => {
  let server: TestServer;
  let writer: TestUser;
  let reader: TestUser;
  let repo: Repo;
  let writerWeb: WebSession;
  let readerWeb: WebSession;
  let requestId: number;
  let number: number;
  let baseHash: string;
  let featureHead: string;

  beforeAll(async () => {
    server = await startTestServer();
    [writer, reader] = await givenUsers(server, 'writer', 'reader');
    repo = await givenRepo(server, 'review', { files: { 'src/calc.ts': CALC, 'README.md': '# Review\n' } });
    baseHash = await repo.head('main');
    featureHead = await repo.commitOn('feature', { 'src/calc.ts': CALC.replace('line 2\n', 'two\n') }, 'Rename line 2');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
    });
    expect(pr.status, pr.text).toBe(200);
    requestId = pr.json;
    number = (await server.call('GET', `/pulls/${requestId}`)).json.number;
    writerWeb = await signInByFetch(server, writer.name, writer.password);
    readerWeb = await signInByFetch(server, reader.name, reader.password);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  /** Adds a code comment on `src/calc.ts` rows `from`–`to` (0-based) at `commit`. */
  const comment = async (content: string, from: number, to: number, commit = featureHead) => {
    const res = await server.call('POST', '/code-comments', {
      body: {
        projectId: repo.id,
        content,
        mark: { commitHash: commit, path: 'src/calc.ts', range: { fromRow: from, fromColumn: 0, toRow: to, toColumn: 3 } },
        compareContext: {
          pullRequestId: requestId,
          oldCommitHash: baseHash,
          newCommitHash: commit,
          pathFilter: null,
          currentFile: 'src/calc.ts',
          whitespaceOption: 'DEFAULT',
        },
      },
    });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const apply = (fields: Record<string, string>, session = writerWeb) =>
    fetch(`${server.url}/review/~pulls/${number}/suggestions`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const changes = async (session = writerWeb) => (await fetch(`${server.url}/review/~pulls/${number}/changes`, { headers: { cookie: session.cookie } })).text();
  const calcOnFeature = async () =>
    Buffer.from((await server.call('GET', `/repositories/${repo.id}/files/feature/src/calc.ts`)).json.base64Content, 'base64').toString('utf8');
  const resolved = async (id: number) => (await server.call('GET', `/code-comments/${id}`)).json.resolved;

  let c1: number;
  let c2: number;
  let c3: number;
  let plain: number;
  let overlapping: number;

  it('draws a suggestion as a diff of the commented lines, with apply controls for writers only', async () => {
    c1 = await comment('Louder:\n```suggestion\nTWO\n```', 1, 1);
    c2 = await comment('```suggestion\nfive-six\n```', 4, 5);
    c3 = await comment('Drop it\n```suggestion\n```', 6, 6);
    plain = await comment('Just a remark', 0, 0);
    overlapping = await comment('```suggestion\nsix-seven\n```', 5, 6);
    const html = await changes();
    expect(html).toContain('<figcaption>Suggested change</figcaption>');
    expect(html).toContain('<del>- two\n</del><ins>+ TWO\n</ins>');
    expect(html).toContain('<del>- line 5\n</del><del>- line 6\n</del><ins>+ five-six\n</ins>');
    expect(html).toContain('<p>Louder:</p>');
    expect(html).toContain(`name="comment-${c1}" value="on" form="suggestion-batch"`);
    expect(html).toContain('>Apply suggestion</button>');
    expect(html).toContain('id="suggestion-batch"');
    expect(html).not.toContain(`name="comment-${plain}"`);
    const asReader = await changes(readerWeb);
    expect(asReader).toContain('<ins>+ TWO\n</ins>');
    expect(asReader).not.toContain('Apply suggestion');
    expect(asReader).not.toContain('id="suggestion-batch"');
  });

  it('refuses what it cannot apply, changing nothing', async () => {
    const cases: [Record<string, string>, number, string, WebSession?][] = [
      [{}, 400, 'Choose at least one suggestion'],
      [{ [`comment-${plain}`]: 'on' }, 400, `Code comment ${plain} holds no suggestion`],
      [{ [`comment-${c2}`]: 'on', [`comment-${overlapping}`]: 'on' }, 400, `Suggestions of code comments ${c2} and ${overlapping} overlap`],
      [{ 'comment-999999': 'on' }, 404, 'Code comment not found: 999999'],
      [{ [`comment-${c1}`]: 'on' }, 403, '', readerWeb],
    ];
    for (const [fields, status, message, session] of cases) {
      const response = await apply(fields, session);
      expect(response.status, JSON.stringify(fields)).toBe(status);
      if (message) expect(await response.text()).toContain(message);
    }
    expect(await repo.head('feature')).toBe(featureHead);
    expect(await resolved(c1)).toBe(false);
  });

  it('applies a batch of two suggestions in one commit on the source branch and resolves them', async () => {
    const response = await apply({ [`comment-${c1}`]: 'on', [`comment-${c2}`]: 'on', message: 'Apply the review' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/review/~pulls/${number}/changes#code-comment-${c1}`);
    const head = await repo.head('feature');
    const commit = (await server.call('GET', `/repositories/${repo.id}/commits/${head}`)).json;
    expect(commit.commitMessage.trim()).toBe('Apply the review');
    expect(commit.author.name).toContain('writer');
    expect(await calcOnFeature()).toBe(['line 1', 'TWO', 'line 3', 'line 4', 'five-six', 'line 7', 'line 8', ''].join('\n'));
    expect(await resolved(c1)).toBe(true);
    expect(await resolved(c2)).toBe(true);
    // one commit, right on top of the head the comments saw
    await git(repo.work, ['fetch', '-q', repo.remote, 'feature']);
    expect((await git(repo.work, ['rev-parse', 'FETCH_HEAD^'])).trim()).toBe(featureHead);
    await server.settled();
    expect(await changes()).not.toContain(`name="comment-${c1}"`);
  });

  it('refuses a resolved comment and lines changed since the comment', async () => {
    const head = await repo.head('feature');
    const again = await apply({ [`comment-${c1}`]: 'on' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain(`Code comment ${c1} is resolved`);
    const moved = await apply({ [`comment-${c3}`]: 'on' });
    expect(moved.status).toBe(409);
    expect(await moved.text()).toContain(`Lines 7–7 of src/calc.ts changed since code comment ${c3} was made`);
    expect(await repo.head('feature')).toBe(head);
  });

  it('applies one suggestion with a default message, under the branch protection of the source branch', async () => {
    const head = await repo.head('feature');
    const first = await comment('```suggestion\nLINE ONE\n```', 0, 0, head);
    await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections: [{ branches: 'feature', reviewRequirement: 'user(admin)' }] } });
    const refused = await apply({ [`comment-${first}`]: 'on' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Review required for this change. Please submit pull request instead');
    expect(await repo.head('feature')).toBe(head);
    await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections: [] } });
    const done = await apply({ [`comment-${first}`]: 'on' });
    expect(done.status).toBe(303);
    const commit = (await server.call('GET', `/repositories/${repo.id}/commits/${await repo.head('feature')}`)).json;
    expect(commit.commitMessage.trim()).toBe(`Apply suggestion from code comment #${first}`);
    expect((await calcOnFeature()).split('\n')[0]).toBe('LINE ONE');
  });
});
