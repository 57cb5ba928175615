import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, freshClone, givenProject, givenRepo, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

describe("OneDev 8.6's repository API (docs/compatibility.md#gitloom-differs-additions-to-the-interface)", () => {
  let server: TestServer;
  let repo: Repo;
  let writer: TestUser;
  let reader: TestUser;
  let outsider: TestUser;
  let first: string;
  let featureHead: string;
  const api = (route: string) => `/repositories/${repo.id}${route}`;

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'repo', { files: { 'README.md': '# repo\n', 'src/a.txt': 'a\n', 'src/deep/b.txt': 'b\n' } });
    first = await repo.head('main');
    featureHead = await repo.commitOn('feature/x', { 'src/a.txt': 'a on feature\n' }, 'feature: change a');
    [writer, reader, outsider] = [await server.createUser('writer'), await server.createUser('reader'), await server.createUser('outsider')];
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    await grantRole(server, repo.id, reader.id, 'Code Reader');
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  describe('branches', () => {
    it('GET /branches is a JSON array of names', async () => {
      const res = await server.call('GET', api('/branches'), { auth: reader.auth });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toEqual(['feature/x', 'main']);
    });

    it('GET /branches/{name} with a slash in the name, and 404 for an unknown branch', async () => {
      expect((await server.call('GET', api('/branches/feature/x'))).json).toEqual({ refName: 'refs/heads/feature/x', commitHash: featureHead });
      expect((await server.call('GET', api('/branches/feature%2Fx'))).json.commitHash).toBe(featureHead);
      const missing = await server.call('GET', api('/branches/nope'));
      expect(missing.status).toBe(404);
      expect(missing.json.detail).toBe('Branch not found: nope');
    });

    it('POST /branches creates a branch (200 empty), 409 when it exists, 403 for a reader, 404 for an outsider', async () => {
      const res = await server.call('POST', api('/branches'), { body: { branchName: 'release/1', revision: 'main' }, auth: writer.auth });
      expect(res.status, res.text).toBe(200);
      expect(res.text).toBe('');
      expect(await repo.head('release/1')).toBe(first);
      const again = await server.call('POST', api('/branches'), { body: { branchName: 'release/1', revision: 'main' }, auth: writer.auth });
      expect(again.status).toBe(409);
      expect(again.json.detail).toBe('Branch already exists: release/1');
      expect((await server.call('POST', api('/branches'), { body: { branchName: 'r2', revision: 'nope' } })).status).toBe(400);
      expect((await server.call('POST', api('/branches'), { body: { branchName: 'bad..name', revision: 'main' } })).status).toBe(400);
      expect((await server.call('POST', api('/branches'), { body: { branchName: 'r2', revision: 'main' }, auth: reader.auth })).status).toBe(403);
      expect((await server.call('POST', api('/branches'), { body: { branchName: 'r2', revision: 'main' }, auth: outsider.auth })).status).toBe(404);
      expect((await server.call('GET', api('/branches'), { auth: outsider.auth })).status).toBe(404);
      expect((await server.call('POST', api('/branches'), { body: { branchName: 'r2', revision: 'main' }, auth: null })).status).toBe(401);
    });

    it('branch protection refuses creation and deletion with the push messages (409)', async () => {
      const setting = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
      const protect = await server.call('POST', `/projects/${repo.id}/setting`, {
        body: { ...setting, branchProtections: [{ branches: 'locked/** release/**' }] },
      });
      expect(protect.status, protect.text).toBe(200);
      try {
        const create = await server.call('POST', api('/branches'), { body: { branchName: 'locked/a', revision: 'main' }, auth: writer.auth });
        expect(create.status).toBe(409);
        expect(create.json.detail).toBe('Can not create this branch');
        const remove = await server.call('DELETE', api('/branches/release/1'), { auth: writer.auth });
        expect(remove.status).toBe(409);
        expect(remove.json.detail).toBe('Can not delete this branch');
        expect(await repo.head('release/1')).toBe(first);
      } finally {
        await server.call('POST', `/projects/${repo.id}/setting`, { body: setting });
      }
    });

    it('DELETE /branches/{name} deletes; the default branch and unknown branches are refused', async () => {
      expect((await server.call('DELETE', api('/branches/release/1'), { auth: writer.auth })).status).toBe(200);
      expect(await repo.head('release/1')).toBe('');
      expect((await server.call('DELETE', api('/branches/release/1'))).status).toBe(404);
      const main = await server.call('DELETE', api('/branches/main'));
      expect(main.status).toBe(409);
      expect(main.json.detail).toBe('Can not delete default branch');
    });
  });

  describe('tags', () => {
    it('creates lightweight and annotated tags (tagger = caller), reads and lists them', async () => {
      expect((await server.call('POST', api('/tags'), { body: { tagName: 'v1', revision: first } })).status).toBe(200);
      const annotated = await server.call('POST', api('/tags'), { body: { tagName: 'v2', tagMessage: 'Release 2', revision: 'feature/x' }, auth: writer.auth });
      expect(annotated.status, annotated.text).toBe(200);
      expect((await server.call('GET', api('/tags'))).json).toEqual(['v1', 'v2']);
      expect((await server.call('GET', api('/tags/v1'))).json).toEqual({ refName: 'refs/tags/v1', commitHash: first });
      expect((await server.call('GET', api('/tags/v2'))).json).toEqual({ refName: 'refs/tags/v2', commitHash: featureHead });
      const clone = await freshClone(server, repo.path);
      const object = await git(clone, ['cat-file', '-p', 'v2']);
      expect(object).toContain(`object ${featureHead}`);
      expect(object).toMatch(/^tagger writer Full <writer@example\.com> \d+ \+0000$/m);
      expect(object).toContain('Release 2');
      expect((await server.call('POST', api('/tags'), { body: { tagName: 'v1', revision: 'main' } })).status).toBe(409);
      expect((await server.call('GET', api('/tags/nope'))).status).toBe(404);
    });

    it('tag protection applies; DELETE /tags/{name} deletes', async () => {
      const setting = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
      await server.call('POST', `/projects/${repo.id}/setting`, { body: { ...setting, tagProtections: [{ tags: 'v*' }] } });
      try {
        const create = await server.call('POST', api('/tags'), { body: { tagName: 'v3', revision: 'main' }, auth: writer.auth });
        expect(create.status).toBe(409);
        expect(create.json.detail).toBe('Can not create this tag');
        const remove = await server.call('DELETE', api('/tags/v1'), { auth: writer.auth });
        expect(remove.json.detail).toBe('Can not delete this tag');
      } finally {
        await server.call('POST', `/projects/${repo.id}/setting`, { body: setting });
      }
      expect((await server.call('DELETE', api('/tags/v1'), { auth: writer.auth })).status).toBe(200);
      expect((await server.call('GET', api('/tags'))).json).toEqual(['v2']);
    });
  });

  describe('commits', () => {
    it('GET /commits/{hash} gives hash, author, committer (with wire dates) and message', async () => {
      const res = await server.call('GET', api(`/commits/${featureHead}`), { auth: reader.auth });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toEqual({
        commitHash: featureHead,
        author: { name: 'Test Author', emailAddress: 'author@example.com', when: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000\+00:00$/) },
        committer: { name: 'Test Author', emailAddress: 'author@example.com', when: expect.any(String) },
        commitMessage: 'feature: change a\n',
      });
      expect((await server.call('GET', api(`/commits/${'0'.repeat(40)}`))).status).toBe(404);
    });

    it('GET /commits runs the commit query, newest first', async () => {
      const query = async (q: string, count = 100) => {
        const res = await server.call('GET', api(`/commits?query=${encodeURIComponent(q)}&count=${count}`));
        expect(res.status, res.text).toBe(200);
        return res.json as string[];
      };
      expect(await query('branch(main)')).toEqual([first]);
      expect(await query('branch(feature/x)')).toEqual([featureHead, first]);
      expect(await query('since branch(main) until branch(feature/x)')).toEqual([featureHead]);
      expect(await query('since tag(v2)')).toEqual([]);
      expect(await query('message(FEATURE:*)')).toEqual([featureHead]);
      expect(await query('author(test author) path(src/a.txt)')).toEqual([featureHead, first]);
      expect(await query('path(src/deep)')).toEqual([first]);
      expect(await query('after(2000-01-01) before(tomorrow)', 1)).toHaveLength(1);
      expect(await query('before(2000-01-01)')).toEqual([]);
      expect(await query('authored-by-me')).toEqual([]);
    });

    it('query errors are 400 with a position; count is at most 10000', async () => {
      const bad = async (q: string, detail: string | RegExp, count = 10) => {
        const res = await server.call('GET', api(`/commits?query=${encodeURIComponent(q)}&count=${count}`));
        expect(res.status, res.text).toBe(400);
        expect(res.json.detail).toMatch(detail);
      };
      await bad('branch(nope)', 'Unable to find branch: nope at column 8');
      await bad('branch(main) frobnicate', "Unexpected 'frobnicate' at column 14");
      await bad('tag(', 'Unterminated value at column 4');
      await bad('after(not a date)', 'Unrecognized date: not a date at column 7');
      await bad('', 'Count should not be greater than 10000', 10001);
    });
  });

  describe('directories and files', () => {
    it('GET /directories lists a directory at a revision that may contain /', async () => {
      expect((await server.call('GET', api('/directories/main'))).json).toEqual([
        { path: 'README.md', isFile: true },
        { path: 'src', isFile: false },
      ]);
      expect((await server.call('GET', api('/directories/feature/x/src'))).json).toEqual([
        { path: 'src/a.txt', isFile: true },
        { path: 'src/deep', isFile: false },
      ]);
      const notDir = await server.call('GET', api('/directories/main/src/a.txt'));
      expect(notDir.status).toBe(400);
      expect(notDir.json.detail).toBe('Specified path is not a directory: src/a.txt');
      expect((await server.call('GET', api('/directories/nope/src'))).status).toBe(404);
    });

    it('GET /files reads a file with its blob id; 400 when not a file', async () => {
      const res = await server.call('GET', api('/files/feature/x/src/a.txt'), { auth: reader.auth });
      expect(res.status, res.text).toBe(200);
      const sha = (await git(repo.work, ['rev-parse', `${featureHead}:src/a.txt`])).trim();
      expect(res.json).toEqual({ path: 'src/a.txt', sha, base64Content: b64('a on feature\n'), size: 13, isPartial: false });
      expect((await server.call('GET', api(`/files/${first}/src/a.txt`))).json.base64Content).toBe(b64('a\n'));
      const dir = await server.call('GET', api('/files/main/src'));
      expect(dir.status).toBe(400);
      expect(dir.json.detail).toBe('Specified path is not a file: src');
    });

    it('POST /files commits a created, updated and deleted file as the caller, by plumbing with compare-and-swap', async () => {
      const created = await server.call('POST', api('/files/feature/x/docs/new.md'), {
        body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Add docs', base64Content: b64('# docs\n') },
        auth: writer.auth,
      });
      expect(created.status, created.text).toBe(200);
      const commitHash = created.json.commitHash as string;
      expect(await repo.head('feature/x')).toBe(commitHash);
      const detail = (await server.call('GET', api(`/commits/${commitHash}`))).json;
      expect(detail.author).toMatchObject({ name: 'writer Full', emailAddress: 'writer@example.com' });
      expect(detail.commitMessage).toBe('Add docs\n');
      expect((await server.call('GET', api('/files/feature/x/docs/new.md'))).json.base64Content).toBe(b64('# docs\n'));

      const updated = await server.call('POST', api('/files/feature/x/src/a.txt'), {
        body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Update a', base64Content: b64('a again\n') },
        auth: writer.auth,
      });
      expect(updated.status, updated.text).toBe(200);
      const deleted = await server.call('POST', api('/files/feature/x/docs/new.md'), {
        body: { '@type': 'FileDeleteRequest', commitMessage: 'Drop docs' },
        auth: writer.auth,
      });
      expect(deleted.status, deleted.text).toBe(200);
      const clone = await freshClone(server, repo.path);
      await git(clone, ['checkout', '-q', 'feature/x']);
      expect(await fs.readFile(path.join(clone, 'src/a.txt'), 'utf8')).toBe('a again\n');
      await expect(fs.stat(path.join(clone, 'docs/new.md'))).rejects.toThrow();
      expect((await git(clone, ['log', '--format=%s', '-3'])).trim().split('\n')).toEqual(['Drop docs', 'Update a', 'Add docs']);
      featureHead = deleted.json.commitHash;
    });

    it('POST /files refuses bad requests without changing anything', async () => {
      const before = await repo.head('feature/x');
      const post = (tail: string, body: unknown, auth?: string) => server.call('POST', api(`/files/${tail}`), { body, auth });
      expect((await post('feature/x/src', { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'x', base64Content: b64('x') })).json.detail).toBe(
        'Specified path is not a file: src',
      );
      expect((await post('feature/x/README.md/x', { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'x', base64Content: b64('x') })).status).toBe(400);
      expect((await post('feature/x/a', { '@type': 'FileCreateOrUpdateRequest', commitMessage: ' ', base64Content: b64('x') })).status).toBe(400);
      expect((await post('feature/x/a', { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'x', base64Content: '***' })).status).toBe(400);
      expect((await post('feature/x/a', { '@type': 'Other', commitMessage: 'x' })).status).toBe(400);
      expect((await post('feature/x/missing', { '@type': 'FileDeleteRequest', commitMessage: 'x' })).status).toBe(404);
      expect((await post('nope/a', { '@type': 'FileDeleteRequest', commitMessage: 'x' })).status).toBe(404);
      expect((await post('feature/x/a', { '@type': 'FileDeleteRequest', commitMessage: 'x' }, reader.auth)).status).toBe(403);
      expect(await repo.head('feature/x')).toBe(before);
    });

    it('file protections and branch protection rules apply to POST /files (409 with the push message)', async () => {
      const setting = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
      await server.call('POST', `/projects/${repo.id}/setting`, {
        body: {
          ...setting,
          branchProtections: [
            { branches: 'feature/**', preventCreation: false, fileProtections: [{ paths: 'secure/**', reviewRequirement: 'user(admin)', jobNames: [] }] },
          ],
        },
      });
      try {
        const res = await server.call('POST', api('/files/feature/x/secure/key.txt'), {
          body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Add key', base64Content: b64('k') },
          auth: writer.auth,
        });
        expect(res.status).toBe(409);
        expect(res.json.detail).toBe('Review required for this change. Please submit pull request instead');
        expect(await repo.head('feature/x')).toBe(featureHead);
        const allowed = await server.call('POST', api('/files/feature/x/open.txt'), {
          body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Add open', base64Content: b64('o') },
          auth: writer.auth,
        });
        expect(allowed.status, allowed.text).toBe(200);
        featureHead = allowed.json.commitHash;
      } finally {
        await server.call('POST', `/projects/${repo.id}/setting`, { body: setting });
      }
    });

    it('a file commit fires the push reactions: the open pull request gets an update', async () => {
      const opened = await server.call('POST', '/pulls', {
        body: { title: 'Feature', targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature/x' },
      });
      expect(opened.status, opened.text).toBe(200);
      const updates = async () => ((await server.call('GET', `/pulls/${opened.json}/updates`)).json as unknown[]).length;
      const initial = await updates();
      const res = await server.call('POST', api('/files/feature/x/more.txt'), {
        body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'More', base64Content: b64('more') },
        auth: writer.auth,
      });
      expect(res.status, res.text).toBe(200);
      expect(await eventually(async () => (await updates()) > initial)).toBe(true);
    });

    it('a large file comes back partial', async () => {
      const big = Buffer.alloc(1024 * 1024 + 10, 'x');
      const res = await server.call('POST', api('/files/main/big.bin'), {
        body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Big', base64Content: b64(big) },
      });
      expect(res.status, res.text).toBe(200);
      const file = (await server.call('GET', api('/files/main/big.bin'))).json;
      expect(file.size).toBe(big.length);
      expect(file.isPartial).toBe(true);
      expect(Buffer.from(file.base64Content, 'base64').length).toBe(1024 * 1024);
    });

    it('on an empty repository the first file commit creates the branch and makes it the default', async () => {
      const empty = await givenProject(server, { name: 'empty' });
      expect((await server.call('GET', `/repositories/${empty}/default-branch`)).status).toBe(204);
      expect((await server.call('GET', `/repositories/${empty}/commits?query=`)).json).toEqual([]);
      const res = await server.call('POST', `/repositories/${empty}/files/main/README.md`, {
        body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Initial', base64Content: b64('# empty\n') },
      });
      expect(res.status, res.text).toBe(200);
      expect((await server.call('GET', `/repositories/${empty}/default-branch`)).text).toBe('main');
      expect((await server.call('GET', `/repositories/${empty}/branches`)).json).toEqual(['main']);
      const detail = (await server.call('GET', `/repositories/${empty}/commits/${res.json.commitHash}`)).json;
      expect(detail.author.emailAddress).toBe(ADMIN.email);

      // a later file commit runs the jobs its spec triggers, as a push would
      const spec = 'version: 25\njobs:\n- name: CI\n  steps: []\n  triggers:\n  - !BranchUpdateTrigger\n    branches: main\n';
      const withSpec = await server.call('POST', `/repositories/${empty}/files/main/.onedev-buildspec.yml`, {
        body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Add CI', base64Content: b64(spec) },
      });
      expect(withSpec.status, withSpec.text).toBe(200);
      const builds = await eventually(async () => {
        const list = (await server.call('GET', `/builds?query=${encodeURIComponent('"Project" is "empty"')}&count=10`)).json as {
          commitHash: string;
          jobName: string;
        }[];
        return list.length > 0 ? list : null;
      });
      expect(builds).toEqual([expect.objectContaining({ commitHash: withSpec.json.commitHash, jobName: 'CI' })]);
    });
  });

  it('OpenAPI lists the repository operations', async () => {
    const doc = (await (await fetch(`${server.url}/~api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const repositoryPaths = Object.entries(doc.paths).filter(([p]) => p.startsWith('/~api/repositories/'));
    const operations = repositoryPaths.flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${p.slice('/~api/repositories/{projectId}'.length)}`),
    );
    for (const expected of ['GET /branches', 'POST /branches', 'GET /tags', 'POST /tags', 'GET /commits', 'GET /commits/{commitHash}']) {
      expect(operations).toContain(expected);
    }
    for (const prefix of ['GET /branches/', 'DELETE /branches/', 'GET /tags/', 'DELETE /tags/', 'GET /directories/', 'GET /files/', 'POST /files/']) {
      expect(operations.some((o) => o.startsWith(prefix))).toBe(true);
    }
  });
});
