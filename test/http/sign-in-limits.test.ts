import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { authenticatePassword } from '../../src/domain/auth/authenticate.js';
import { anonymous, createContext } from '../../src/domain/context.js';
import {
  DELAYED_PER_ACCOUNT,
  DELAYED_PER_PAIR,
  SIGN_IN_ACCOUNT_CEILING,
  SIGN_IN_ADDRESS_CEILING,
  SIGN_IN_PAIR_LIMIT,
  SIGN_IN_WINDOW_MS,
  signInDelayMs,
} from '../../src/domain/auth/sign-in-limits.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { cookiesOf, csrfTokenOf } from '../helpers/browser.js';
import { basic, startTestServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
  /** When the answer arrived, ms after the request was sent. */
  ms: number;
}

/**
 * GET /~api/users/me with `auth`. `client` is the client address: sent as `X-Forwarded-For`
 * through the loopback proxy address 127.0.0.1 (which the proxied server trusts), or with
 * `localAddress` set the request leaves from that loopback address instead (the server sees it
 * as the client address, or as an untrusted peer when it also sends `X-Forwarded-For`).
 */
function from(server: { url: string }, client: { forwarded?: string; localAddress?: string }, auth: string): Promise<Answer> {
  const url = new URL(server.url);
  const headers: Record<string, string> = { authorization: auth, ...(client.forwarded && { 'x-forwarded-for': client.forwarded }) };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, localAddress: client.localAddress ?? '127.0.0.1', method: 'GET', path: '/~api/users/me', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined, ms: performance.now() - started }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** From a forwarded client address (through the trusted proxy 127.0.0.1). */
const via = (address: string) => ({ forwarded: address });
/** From a loopback address of its own. */
const direct = (localAddress: string) => ({ localAddress });

function expectLimited(res: Answer, maxSeconds = SIGN_IN_WINDOW_MS / 1000): void {
  expect(res.status, JSON.stringify(res.json)).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({
    status: 429,
    title: 'Too Many Requests',
    code: 'GITLOOM_ERR_SIGN_IN_LIMIT',
    detail: expect.stringMatching(/^Too many failed sign-ins, try again in \d+ (second|minute)s?$/),
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
}

/** `count` wrong passwords for `name` from `address`, each answered 401 (a few at a time). */
async function fail(server: TestServer, name: string, address: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 5) {
    const answers = await Promise.all(Array.from({ length: Math.min(5, count - i) }, (_, j) => from(server, via(address), basic(name, `wrong-${i + j}`))));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.json)).toBe(401);
  }
}

/** 100 failures of one account, from 10 addresses `<prefix>.1`… (10 each: every pair is then limited). */
async function failFromTenAddresses(server: TestServer, name: string, prefix: string): Promise<void> {
  expect(SIGN_IN_ACCOUNT_CEILING).toBe(10 * SIGN_IN_PAIR_LIMIT);
  await Promise.all(Array.from({ length: 10 }, (_, i) => fail(server, name, `${prefix}.${i + 1}`, SIGN_IN_PAIR_LIMIT)));
}

/** POST /~login like a browser from a forwarded client address: status, headers and page. */
async function webSignIn(server: TestServer, address: string, name: string, password: string): Promise<{ status: number; headers: Headers; html: string }> {
  const headers = { 'x-forwarded-for': address };
  const form = await fetch(`${server.url}/~login`, { headers });
  const response = await fetch(`${server.url}/~login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name, password }).toString(),
  });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

describe('failed sign-ins: per (account, address) pair, with ceilings per address and per account', () => {
  let server: TestServer;
  const users: Record<string, Awaited<ReturnType<TestServer['createUser']>>> = {};
  let bobToken: string;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_TRUST_PROXY: '127.0.0.1' });
    for (const name of ['alice', 'bob', 'carol', 'dave', 'erin']) users[name] = await server.createUser(name);
    const token = await server.call('POST', `/users/${users.bob.id}/access-tokens`, { body: { description: 'ci', expireDate: null } });
    expect(token.status, token.text).toBe(200);
    bobToken = token.text;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('10 failures limit that pair only: the same account from another address and another account from that address sign in', async () => {
    const { alice, bob } = users;
    await fail(server, 'alice', '198.51.100.1', SIGN_IN_PAIR_LIMIT);
    // the right password is refused for the pair, under any of the account's names
    expectLimited(await from(server, via('198.51.100.1'), basic('alice', alice.password)));
    expectLimited(await from(server, via('198.51.100.1'), basic('ALICE', alice.password)));
    expectLimited(await from(server, via('198.51.100.1'), basic('alice@example.com', alice.password)));
    // controls: the account from another address, another account from that address
    expect((await from(server, via('198.51.100.2'), basic('alice', alice.password))).status).toBe(200);
    expect((await from(server, via('198.51.100.1'), basic('bob', bob.password))).status).toBe(200);

    // once the window has passed the right password works again, and ended windows are deleted
    const db = server.server.services.db;
    const later = Date.now() + SIGN_IN_WINDOW_MS + 1000;
    const ended = () =>
      db
        .selectFrom('signInFailures')
        .select('subject')
        .where('windowStart', '<=', later - SIGN_IN_WINDOW_MS)
        .execute();
    expect((await ended()).map((row) => row.subject)).toContain(`pair:#${alice.id}|198.51.100.1`);
    const ctx = createContext(server.server.services, anonymous, { client: { address: '198.51.100.1', userAgent: null } });
    const actor = await authenticatePassword({ ...ctx, now: () => later }, 'alice', alice.password);
    expect(actor.userId).toBe(alice.id);
    expect(await ended()).toEqual([]);
  });

  it("a successful sign-in clears its pair's failures", async () => {
    const { carol } = users;
    await fail(server, 'carol', '198.51.100.3', SIGN_IN_PAIR_LIMIT - 1);
    expect((await from(server, via('198.51.100.3'), basic('carol', carol.password))).status).toBe(200);
    await fail(server, 'carol', '198.51.100.3', SIGN_IN_PAIR_LIMIT - 1);
    expect((await from(server, via('198.51.100.3'), basic('carol@example.com', carol.password))).status).toBe(200);
    // the tenth failure in a row limits the pair
    await fail(server, 'carol', '198.51.100.3', SIGN_IN_PAIR_LIMIT);
    expectLimited(await from(server, via('198.51.100.3'), basic('carol', carol.password)));
  });

  it('concurrent guesses cannot all pass the check: a pair gets at most 10 failures', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => from(server, via('198.51.100.4'), basic('erin', `guess-${i}`))));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(SIGN_IN_PAIR_LIMIT);
    for (const answer of answers.filter((a) => a.status !== 401)) expectLimited(answer);
    expectLimited(await from(server, via('198.51.100.4'), basic('erin', users.erin.password)));
    expect((await from(server, via('198.51.100.5'), basic('erin', users.erin.password))).status).toBe(200);
  });

  it('100 failures from one address, for many accounts, limit password sign-ins from it; tokens still work', async () => {
    const { bob } = users;
    const address = '192.0.2.10';
    // 99 failures under 33 names (3 each: no pair is limited), most of them naming nobody
    await Promise.all(Array.from({ length: 33 }, (_, i) => fail(server, i < 3 ? ['alice', 'carol', 'erin'][i] : `office${i}`, address, 3)));
    // below the ceiling an account still signs in from there (and gives its attempt back)
    expect((await from(server, via(address), basic('bob', bob.password))).status).toBe(200);
    await fail(server, 'office-last', address, SIGN_IN_ADDRESS_CEILING - 99);
    expectLimited(await from(server, via(address), basic('bob', bob.password)));
    expectLimited(await from(server, via(address), basic('office-new', 'any')));
    // controls: the account from another address; access tokens from the limited address
    expect((await from(server, via('192.0.2.11'), basic('bob', bob.password))).status).toBe(200);
    expect((await from(server, via(address), `Bearer ${bobToken}`)).status).toBe(200);
    expect((await from(server, via(address), basic('anyone', bobToken))).status).toBe(200);
  });

  it('access tokens are neither counted nor refused', async () => {
    const { bob } = users;
    // invalid Bearer tokens count nowhere: the password still signs in from that address
    for (let i = 0; i < SIGN_IN_PAIR_LIMIT + 2; i++) expect((await from(server, via('192.0.2.20'), `Bearer wrong-${i}`)).status).toBe(401);
    expect((await from(server, via('192.0.2.20'), basic('bob', bob.password))).status).toBe(200);
    // a limited pair still takes the account's token, as Bearer or as the Basic secret
    await fail(server, 'bob', '192.0.2.21', SIGN_IN_PAIR_LIMIT);
    expectLimited(await from(server, via('192.0.2.21'), basic('bob', bob.password)));
    expect((await from(server, via('192.0.2.21'), `Bearer ${bobToken}`)).status).toBe(200);
    expect((await from(server, via('192.0.2.21'), basic('bob', bobToken))).status).toBe(200);
  });

  it('past 100 failures of an account from many addresses, attempts wait before the check (the right password still succeeds), a bounded number at once', async () => {
    const { dave } = users;
    await failFromTenAddresses(server, 'dave', '203.0.113');
    // a pair already limited is refused at once, not delayed
    expectLimited(await from(server, via('203.0.113.1'), basic('dave', dave.password)));
    // from fresh addresses every attempt waits: 250 ms, then 500 ms (each failure doubles it)
    for (const [address, failures] of [
      ['203.0.113.21', 100],
      ['203.0.113.22', 101],
    ] as const) {
      const wrong = await from(server, via(address), basic('dave', 'still-guessing'));
      expect(wrong.status).toBe(401);
      expect(wrong.ms).toBeGreaterThanOrEqual(signInDelayMs(failures));
    }
    expect(signInDelayMs(100)).toBe(250);
    expect(signInDelayMs(102)).toBe(1000);
    const right = await from(server, via('203.0.113.23'), basic('dave', dave.password));
    expect(right.status).toBe(200);
    expect(right.json.name).toBe('dave');
    expect(right.ms).toBeGreaterThanOrEqual(signInDelayMs(102));
    // the web sign-in page waits the same way
    const started = performance.now();
    expect((await webSignIn(server, '203.0.113.24', 'dave@example.com', 'wrong-on-the-page')).status).toBe(401);
    expect(performance.now() - started).toBeGreaterThanOrEqual(signInDelayMs(102));

    // at most 2 attempts per pair and 8 per account wait at once; beyond that 429 with
    // Retry-After. With 103 failures the wait is 2 s, time for both bursts below to arrive.
    const delay = signInDelayMs(103);
    expect(delay).toBe(2000);
    const settledFirst = (answers: Promise<Answer>[]) => Promise.race(answers);

    // three at once from one address: two wait, the third is refused at once
    const samePair = Array.from({ length: DELAYED_PER_PAIR + 1 }, () => from(server, via('203.0.113.140'), basic('dave', 'guess')));
    expectLimited(await settledFirst(samePair), Math.ceil(delay / 1000));
    // seven more from fresh addresses: six wait (eight in all), the seventh is refused at once
    const others = Array.from({ length: DELAYED_PER_ACCOUNT - DELAYED_PER_PAIR + 1 }, (_, i) =>
      from(server, via(`203.0.113.${150 + i}`), basic('dave', 'guess')),
    );
    expectLimited(await settledFirst(others), Math.ceil(delay / 1000));
    const answers = await Promise.all([...samePair, ...others]);
    const waited = answers.filter((a) => a.status === 401);
    expect(waited).toHaveLength(DELAYED_PER_ACCOUNT);
    for (const answer of waited) expect(answer.ms).toBeGreaterThanOrEqual(delay);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(2);
  });

  it("the web sign-in page shows the API's problem detail", async () => {
    const { erin } = users;
    await fail(server, 'erin', '198.51.100.30', SIGN_IN_PAIR_LIMIT);
    const api = await from(server, via('198.51.100.30'), basic('erin', erin.password));
    expectLimited(api);
    const page = await webSignIn(server, '198.51.100.30', 'erin', erin.password);
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page.html).toContain(`<p class="flash error" role="alert">${api.json.detail}</p>`);
    // control: the same account from another address signs in on the page
    expect((await webSignIn(server, '198.51.100.31', 'erin', erin.password)).status).toBe(303);
  });

  it('an unknown name and a wrong password get the same answer', async () => {
    const unknown = await from(server, via('198.51.100.40'), basic('no-such-user', 'secret'));
    const wrong = await from(server, via('198.51.100.41'), basic('bob', 'secret'));
    expect(unknown.status).toBe(401);
    expect(unknown.json).toEqual(wrong.json);
  });

  it('counts through the database, so a second server process on it agrees', async () => {
    const config = server.server.services.config;
    const other: RunningServer = await startServer(
      loadConfig(
        {
          GITLOOM_HOST: '127.0.0.1',
          GITLOOM_SSH_PORT: '0',
          GITLOOM_JOB_CONCURRENCY: '1',
          GITLOOM_INITIAL_PASSWORD: 'admin-secret',
          ...(config.databaseUrl && { GITLOOM_DATABASE_URL: config.databaseUrl }),
        },
        { port: 0, dataDir: config.dataDir },
      ),
      { logger: false },
    );
    try {
      for (let i = 0; i < SIGN_IN_PAIR_LIMIT; i++) {
        const target = i % 2 === 0 ? server : other;
        expect((await from(target, direct('127.0.0.8'), basic('bob', `guess${i}`))).status).toBe(401);
      }
      expectLimited(await from(other, direct('127.0.0.8'), basic('bob', users.bob.password)));
      expectLimited(await from(server, direct('127.0.0.8'), basic('bob', users.bob.password)));
      expect((await from(other, direct('127.0.0.9'), basic('bob', users.bob.password))).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('behind a trusted proxy', () => {
  it('the forwarded client address is the one limited', async () => {
    const proxied = await startTestServer({ GITLOOM_TRUST_PROXY: '127.0.0.1' });
    try {
      for (let i = 0; i < SIGN_IN_PAIR_LIMIT; i++) {
        expect((await from(proxied, via('203.0.113.7'), basic('admin', `guess${i}`))).status).toBe(401);
      }
      expectLimited(await from(proxied, via('203.0.113.7'), basic('admin', 'admin-secret')));
      expect((await from(proxied, via('203.0.113.8'), basic('admin', 'admin-secret'))).status).toBe(200);
      // the header of an untrusted peer is ignored: its own address is not limited
      expect((await from(proxied, { localAddress: '127.0.0.2', forwarded: '203.0.113.7' }, basic('admin', 'admin-secret'))).status).toBe(200);
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
        const created = await fetch(`${logged.api}/projects`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: '{"name":"logged"}',
        });
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
          socket.write(
            `POST /~api/issues HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${basic('admin', 'admin-secret')}\r\n` +
              'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"projectId":',
          );
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
