import fs from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvents } from '../../src/domain/events.js';
import { git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

describe('git smart HTTP: request errors and pushers', () => {
  let server: TestServer;
  let writer: Awaited<ReturnType<TestServer['createUser']>>;
  let work: string;
  const pushes: DomainEvents['refsUpdated'][] = [];

  beforeAll(async () => {
    server = await startTestServer();
    const projectId = (await server.call('POST', '/projects', { body: { name: 'errs' } })).json;
    writer = await server.createUser('pusher');
    expect((await server.call('POST', '/user-authorizations', { body: { projectId, userId: writer.id, roleId: 2 } })).status).toBe(200);
    server.server.services.events.on('refsUpdated', (event) => {
      pushes.push(event);
    });
    work = await makeWorkTree({ 'a.txt': 'a\n' });
  });
  afterAll(async () => {
    await server.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  async function post(service: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${server.url}/errs.git/${service}`, {
      method: 'POST',
      headers: { authorization: writer.auth, 'content-type': `application/x-${service}-request`, ...headers },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
  }

  for (const service of ['git-upload-pack', 'git-receive-pack']) {
    it(`answers a malformed ${service} body with 400 problem+json`, async () => {
      // receive-pack expects ref update commands, so an upload-pack request is malformed to it
      const wrongService = service === 'git-receive-pack' ? ['0032want 0000000000000000000000000000000000000000\n0000'] : [];
      for (const body of ['garbage that is no pkt-line', '', 'zzzz0000', '0010trunca', ...wrongService]) {
        const res = await post(service, body);
        expect(res.status, `${service} ${JSON.stringify(body)}`).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect((await res.json()).detail).toBe(`Malformed ${service} request`);
      }
      const gz = await post(service, gzipSync('not a pkt-line stream'), { 'content-encoding': 'gzip' });
      expect(gz.status).toBe(400);
    });
  }

  it('still serves a well-formed empty request (flush packet only)', async () => {
    const res = await post('git-upload-pack', '0000');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
  });

  it('reports the pusher with the pushed ref changes', async () => {
    await git(work, ['push', '-q', gitUrl(server, 'errs', writer), 'main']);
    await server.settled();
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    expect(pushes).toHaveLength(1);
    expect(pushes[0]).toMatchObject({ userId: writer.id, changes: [{ ref: 'refs/heads/main', oldHash: null, newHash: head }] });
  });
});
