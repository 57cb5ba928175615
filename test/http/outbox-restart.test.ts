import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/fixtures.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { ADMIN, basic, createPostgresDatabase, serveChild } from '../helpers/server.js';

describe('outbox: a crash between event and delivery', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('still delivers after kill -9 and restart', async () => {
    // the first delivery hangs (the server is killed while sending), later ones succeed
    const receiver = await startHttpReceiver((_req, index) => (index === 0 ? null : 200));
    cleanup.push(() => receiver.close());
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-crash-'));
    cleanup.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;
    const database = pgBase ? await createPostgresDatabase(pgBase) : null;
    if (database) cleanup.push(() => database.drop());
    const env = {
      GITLOOM_DATA_DIR: dataDir,
      GITLOOM_PORT: '0',
      GITLOOM_HOST: '127.0.0.1',
      GITLOOM_INITIAL_USER: ADMIN.name,
      GITLOOM_INITIAL_PASSWORD: ADMIN.password,
      GITLOOM_INITIAL_EMAIL: ADMIN.email,
      GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true',
      GITLOOM_OUTBOX_BACKOFF_MS: '50',
      GITLOOM_LOG_LEVEL: 'warn',
      ...(database && { GITLOOM_DATABASE_URL: database.url }),
    };
    const call = async (url: string, method: string, route: string, body?: unknown) => {
      const res = await fetch(`${url}/~api${route}`, {
        method,
        headers: { authorization: basic(ADMIN.name, ADMIN.password), ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
    };

    const first = await serveChild(env);
    const project = (await call(first.url, 'POST', '/projects', { name: 'crash' })).json as number;
    const setting = (await call(first.url, 'GET', `/projects/${project}/setting`)).json;
    expect(
      (
        await call(first.url, 'POST', `/projects/${project}/setting`, {
          ...setting,
          webHooks: [{ postUrl: `${receiver.url}/hook`, eventTypes: ['ISSUE'], secret: 'k' }],
        })
      ).status,
    ).toBe(200);
    expect((await call(first.url, 'POST', '/issues', { projectId: project, title: 'Survives a crash' })).status).toBe(200);
    expect(await eventually(async () => receiver.received.length === 1, 30_000)).toBe(true);
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;

    const second = await serveChild(env);
    cleanup.push(async () => {
      const done = new Promise((resolve) => second.child.once('exit', resolve));
      second.child.kill('SIGTERM');
      await done;
    });
    const delivered = await eventually(async () => {
      const list = (await call(second.url, 'GET', `/projects/${project}/webhook-deliveries`)).json as any[];
      return list.find((d) => d.status === 'DELIVERED');
    }, 60_000);
    expect(delivered).toMatchObject({ eventType: 'ISSUE', attemptCount: 1 });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1].headers['x-gitloom-delivery']).toBe(receiver.received[0].headers['x-gitloom-delivery']);
    expect(JSON.parse(receiver.received[1].body)).toMatchObject({ '@type': 'IssueOpened', issue: { title: 'Survives a crash' } });
  }, 120_000);
});
