import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { authenticatePassword } from '../../src/domain/auth/authenticate.js';
import { SIGN_IN_WINDOW_MS } from '../../src/domain/auth/sign-in-limits.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { basic, startTestServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
}

/**
 * GET /~api/users/me from a chosen loopback address (the server sees it as the client address),
 * with extra headers.
 */
function from(server: { url: string }, localAddress: string, auth: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, localAddress, method: 'GET', path: '/~api/users/me', headers: { authorization: auth, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectLimited(res: Answer): void {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({ status: 429, title: 'Too Many Requests', code: 'GITLOOM_ERR_SIGN_IN_LIMIT', detail: expect.stringMatching(/failed sign-ins/) });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_WINDOW_MS / 1000);
}

describe('failed sign-ins: 10 in 5 minutes per account and per client address → 429', () => {
  let server: TestServer;
  let alice: Awaited<ReturnType<TestServer['createUser']>>;
  let bob: Awaited<ReturnType<TestServer['createUser']>>;
  let bobToken: string;

  beforeAll(async () => {
    server = await startTestServer();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    const token = await server.call('POST', `/users/${bob.id}/access-tokens`, { body: { description: 'ci', expireDate: null } });
    expect(token.status, token.text).toBe(200);
    bobToken = token.text;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('per account: the right password is refused from any address until the window passes; other accounts are unaffected', async () => {
    for (let i = 0; i < 10; i++) {
      const wrong = await from(server, '127.0.0.2', basic('alice', `wrong-${i}`));
      expect(wrong.status).toBe(401);
      expect(wrong.json.code).toBe('GITLOOM_ERR_UNAUTHORIZED');
    }
    expectLimited(await from(server, '127.0.0.2', basic('alice', alice.password)));
    // the account is blocked from a fresh address too, also when named by its email
    expectLimited(await from(server, '127.0.0.3', basic('alice', alice.password)));
    expectLimited(await from(server, '127.0.0.3', basic('ALICE', alice.password)));
    expectLimited(await from(server, '127.0.0.3', basic('alice@example.com', alice.password)));
    // another account from that fresh address signs in
    expect((await from(server, '127.0.0.3', basic('bob', bob.password))).status).toBe(200);

    // once the window has passed the right password works again (and clears the account's count)
    const db = server.server.services.db;
    const actor = await authenticatePassword(db, 'alice', alice.password, Date.now() + SIGN_IN_WINDOW_MS + 1000, '127.0.0.3');
    expect(actor.userId).toBe(alice.id);
    expect((await from(server, '127.0.0.3', basic('alice', alice.password))).status).toBe(200);
  });

  it('per address: 10 failures for any names block password sign-ins from that address only; tokens still work', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await from(server, '127.0.0.4', basic(`nobody${i}`, 'guess'))).status).toBe(401);
    }
    expectLimited(await from(server, '127.0.0.4', basic('bob', bob.password)));
    expect((await from(server, '127.0.0.5', basic('bob', bob.password))).status).toBe(200);
    expect((await from(server, '127.0.0.4', `Bearer ${bobToken}`)).status).toBe(200);
    expect((await from(server, '127.0.0.4', basic('anyone', bobToken))).status).toBe(200);
  });

  it('an unknown name and a wrong password get the same answer', async () => {
    const unknown = await from(server, '127.0.0.6', basic('no-such-user', 'secret'));
    const wrong = await from(server, '127.0.0.7', basic('bob', 'secret'));
    expect(unknown.status).toBe(401);
    expect(unknown.json).toEqual(wrong.json);
  });

  it('counts through the database, so a second server process on it agrees', async () => {
    const config = server.server.services.config;
    const other: RunningServer = await startServer(loadConfig({
      GITLOOM_HOST: '127.0.0.1', GITLOOM_JOB_CONCURRENCY: '1', GITLOOM_INITIAL_PASSWORD: 'admin-secret',
      ...(config.databaseUrl && { GITLOOM_DATABASE_URL: config.databaseUrl }),
    }, { port: 0, dataDir: config.dataDir }), { logger: false });
    try {
      for (let i = 0; i < 10; i++) {
        const target = i % 2 === 0 ? server : other;
        expect((await from(target, '127.0.0.8', basic('carol', `guess${i}`))).status).toBe(401);
      }
      expectLimited(await from(other, '127.0.0.9', basic('carol', 'guess')));
      expectLimited(await from(server, '127.0.0.8', basic('bob', bob.password)));
    } finally {
      await other.close();
    }
  });
});

describe('behind a trusted proxy', () => {
  it('the forwarded client address is the one limited', async () => {
    const proxied = await startTestServer({ GITLOOM_TRUST_PROXY: '127.0.0.1' });
    try {
      const client = (address: string) => ({ 'x-forwarded-for': address });
      for (let i = 0; i < 10; i++) {
        expect((await from(proxied, '127.0.0.1', basic(`nobody${i}`, 'guess'), client('203.0.113.7'))).status).toBe(401);
      }
      expectLimited(await from(proxied, '127.0.0.1', basic('admin', 'admin-secret'), client('203.0.113.7')));
      expect((await from(proxied, '127.0.0.1', basic('admin', 'admin-secret'), client('203.0.113.8'))).status).toBe(200);
      // the header of an untrusted peer is ignored: its own address is not limited
      expect((await from(proxied, '127.0.0.2', basic('admin', 'admin-secret'), client('203.0.113.7'))).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});

describe('logs and timeouts', () => {
  it('credentials in a logged URL are redacted', async () => {
    const lines: string[] = [];
    const logged = await startTestServer({ GITLOOM_LOG_LEVEL: 'info' }, { logDestination: { write: (line: string) => lines.push(line) } });
    try {
      const res = await fetch(`${logged.api}/projects?access-token=TOPSECRETTOKENVALUE&count=1&password=hunter2`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      await fetch(`${logged.api}/trigger-job?access-token=TOPSECRETTOKENVALUE&project=x&branch=main&job=ci`);
      // credential headers, on answered and on failed requests, never reach the log
      await fetch(`${logged.api}/users/me`, { headers: { authorization: 'Bearer SECRETBEARERVALUE', cookie: 'gitloom_session=SECRETCOOKIEVALUE' } });
      await fetch(`${logged.api}/users/me`, { headers: { authorization: basic('admin', 'SECRETPASSWORDVALUE') } });
    } finally {
      await logged.close();
    }
    const text = lines.join('');
    expect(text).toContain('/~api/projects?access-token=[REDACTED]&count=1&password=[REDACTED]');
    expect(text).toContain('/~api/trigger-job?access-token=[REDACTED]&project=x');
    expect(text).not.toContain('TOPSECRETTOKENVALUE');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('"url":"/~api/users/me"');
    for (const secret of ['SECRETBEARERVALUE', 'SECRETCOOKIEVALUE', Buffer.from('admin:SECRETPASSWORDVALUE').toString('base64')]) {
      expect(text).not.toContain(secret);
    }
  });

  it('logs changes, refusals and failures at info and successful reads only at debug', async () => {
    const completed = async (level: string) => {
      const lines: { level: number; msg: string; reqId?: string; req?: { method: string; url: string }; res?: { statusCode: number } }[] = [];
      const logged = await startTestServer({ GITLOOM_LOG_LEVEL: level }, { logDestination: { write: (line: string) => lines.push(JSON.parse(line)) } });
      try {
        const admin = { authorization: basic('admin', 'admin-secret') };
        expect((await fetch(`${logged.api}/users/me`, { headers: admin })).status).toBe(200);
        expect((await fetch(`${logged.api}/projects/999`, { headers: admin })).status).toBe(404);
        const created = await fetch(`${logged.api}/projects`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{"name":"logged"}' });
        expect(created.status).toBe(200);
      } finally {
        await logged.close();
      }
      const requests = lines.filter((line) => line.msg === 'request completed');
      // each line names its own request (the request logger is made on its first line)
      expect(new Set(requests.map((line) => line.reqId)).size).toBe(requests.length);
      for (const line of requests) expect(line.reqId).toMatch(/^req-/);
      return requests.map((line) => `${line.level} ${line.req?.method} ${line.req?.url} ${line.res?.statusCode}`);
    };
    // pino levels: 20 debug, 30 info
    expect(await completed('info')).toEqual(['30 GET /~api/projects/999 404', '30 POST /~api/projects 200']);
    expect(await completed('debug')).toEqual(['20 GET /~api/users/me 200', '30 GET /~api/projects/999 404', '30 POST /~api/projects 200']);
  });

  it('a request whose body never finishes is cut with 408 problem+json', async () => {
    const slow = await startTestServer({ GITLOOM_REQUEST_TIMEOUT_MS: '1000' });
    try {
      const url = new URL(slow.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(url.port), url.hostname, () => {
          socket.write(`POST /~api/issues HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${basic('admin', 'admin-secret')}\r\n`
            + 'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"projectId":');
        });
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toMatch(/content-type: application\/problem\+json/i);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 408, code: 'GITLOOM_ERR_REQUEST_TIMEOUT' });
    } finally {
      await slow.close();
    }
  });
});
