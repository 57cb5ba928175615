/**
 * The agent's log shipping (src/agent/log-shipper.ts) against a real HTTP peer started here: lines
 * posted in order, one request at a time, within the batch time; unanswered posts tried again
 * without losing or reordering lines; a refusal drops the rest.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LogShipper } from '../../src/agent/log-shipper.js';
import { eventually } from '../helpers/fixtures.js';
import { Backoff, callServer } from '../../src/agent/server-client.js';

interface Received {
  at: number;
  body: string;
  auth: string | undefined;
  type: string | undefined;
}

/** A peer that records each POST and answers with `answer(n)` (n: 0-based request number). */
async function peer(
  answer: (n: number) => number = () => 200,
  port = 0,
): Promise<{ server: Server; url: string; received: Received[]; inFlight: () => number; maxInFlight: () => number }> {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = answer(n++);
      // a slow peer: lines keep coming while a post is under way
      setTimeout(() => {
        if (status === 200)
          received.push({ at: Date.now(), body: Buffer.concat(chunks).toString('utf8'), auth: req.headers.authorization, type: req.headers['content-type'] });
        inFlight--;
        res.writeHead(status, { 'content-type': 'application/problem+json' });
        res.end(
          status === 200 ? '' : JSON.stringify({ status, detail: `answered ${status}`, code: status === 409 ? 'GITLOOM_ERR_CONFLICT' : 'GITLOOM_ERR_X' }),
        );
      }, 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${bound}`, received, inFlight: () => inFlight, maxInFlight: () => maxInFlight };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

function shipper(url: string, extra: Partial<ConstructorParameters<typeof LogShipper>[0]> = {}): { log: LogShipper; dropped: string[]; retries: number[] } {
  const dropped: string[] = [];
  const retries: number[] = [];
  const log = new LogShipper({
    send: async (text) => void (await callServer(url, '/~agent/job/log', { token: 'job-token', text, timeoutMs: 2000 })),
    onDropped: (reason) => dropped.push(reason),
    onRetry: () => retries.push(Date.now()),
    backoff: new Backoff(20, 100),
    ...extra,
  });
  return { log, dropped, retries };
}

const lines = (received: Received[]) => received.flatMap((r) => r.body.split('\n').filter(Boolean)).map((l) => l.slice(9));

describe('LogShipper', () => {
  it('posts the lines in order, one request at a time, as text/plain with the job token, while they come', async () => {
    const p = await peer();
    servers.push(p.server);
    const { log } = shipper(p.url);
    log.line('first');
    for (let i = 0; i < 50; i++) {
      log.line(`line ${i}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    // batches leave while lines still come, not only at the close
    const shipping = await eventually(async () => p.received.length > 1, 10_000);
    expect(shipping).toBe(true);
    await log.close();
    expect(lines(p.received)).toEqual(['first', ...Array.from({ length: 50 }, (_, i) => `line ${i}`)]);
    expect(p.maxInFlight()).toBe(1);
    expect(p.received[0].auth).toBe('Bearer job-token');
    expect(p.received[0].type).toMatch(/^text\/plain/);
    expect(p.received[0].body).toMatch(/^\d\d:\d\d:\d\d first\n/);
  });

  it('tries a post again while the server answers 5xx, keeping every line in order', async () => {
    const p = await peer((n) => (n < 3 ? 503 : 200));
    servers.push(p.server);
    const { log, retries, dropped } = shipper(p.url);
    log.line('one');
    await new Promise((r) => setTimeout(r, 150));
    log.line('two');
    log.line('three');
    await log.close();
    expect(retries.length).toBe(3);
    expect(dropped).toEqual([]);
    expect(lines(p.received)).toEqual(['one', 'two', 'three']);
  });

  it('tries again while the server is unreachable, then delivers once it listens again', async () => {
    const first = await peer();
    const port = new URL(first.url).port;
    await new Promise((resolve) => first.server.close(resolve));
    const { log, retries } = shipper(first.url);
    log.line('while down 1');
    log.line('while down 2');
    // tried again, and again, while nothing listens
    expect(await eventually(async () => retries.length > 1, 10_000)).toBe(true);
    log.line('while down 3');
    const second = await peer(() => 200, Number(port));
    servers.push(second.server);
    await log.close();
    expect(lines(second.received)).toEqual(['while down 1', 'while down 2', 'while down 3']);
  });

  it('drops the rest once the server refuses (the job token no longer valid), saying why', async () => {
    const p = await peer((n) => (n === 0 ? 200 : 409));
    servers.push(p.server);
    const { log, dropped } = shipper(p.url);
    log.line('accepted');
    // the first line is taken alone, before the next is written
    expect(await eventually(async () => p.received.length === 1, 10_000)).toBe(true);
    log.line('refused');
    await log.close();
    log.line('after');
    await log.close();
    expect(lines(p.received)).toEqual(['accepted']);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toContain('409');
    expect(log.droppedReason).toContain('answered 409');
  });

  it('stops trying when abandoned (the lease is gone)', async () => {
    const p = await peer(() => 503);
    servers.push(p.server);
    const { log, dropped } = shipper(p.url);
    log.line('never');
    await new Promise((r) => setTimeout(r, 200));
    log.abandon('the build ended');
    await log.close();
    expect(dropped).toEqual(['the build ended']);
    expect(p.received).toEqual([]);
  });
});
