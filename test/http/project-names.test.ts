import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject } from '../helpers/fixtures.js';

describe('project names ending in .git (git clients strip the suffix)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses them on create with 400, whatever the case of the suffix', async () => {
    for (const name of ['x.git', 'Lib.GIT']) {
      const res = await server.call('POST', '/projects', { body: { name } });
      expect(res.status, res.text).toBe(400);
      expect(res.json.detail).toBe(`Project name should not end with '.git': ${name}`);
    }
    const projects = (await server.call('GET', '/projects?count=100')).json as { name: string }[];
    expect(projects.map((p) => p.name)).not.toContain('x.git');
  });

  it('refuses them on rename with 400 and keeps the name', async () => {
    const id = await givenProject(server, { name: 'x' });
    const res = await server.call('POST', `/projects/${id}`, { body: { name: 'x.git' } });
    expect(res.status, res.text).toBe(400);
    expect((await server.call('GET', `/projects/${id}`)).json.name).toBe('x');
  });

  it('still accepts other dotted names', async () => {
    expect(await givenProject(server, { name: 'x.github' })).toBeGreaterThan(0);
    expect(await givenProject(server, { name: 'git' })).toBeGreaterThan(0);
  });
});
