import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { batchedWritesPlugin } from '../../src/plugins/batched-writes.js';

/** A Fastify server with the plugin, listening on a free port. */
async function serve(setup: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(batchedWritesPlugin);
  setup(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

const url = (app: FastifyInstance, path: string) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`;

describe('batched writes', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('writes a response after the callbacks of the turn in which it was made', async () => {
    const events: string[] = [];
    app = await serve((app) => {
      app.addHook('onRequest', (_request, reply, done) => {
        const end = reply.raw.end.bind(reply.raw);
        reply.raw.end = ((...args: Parameters<typeof end>) => {
          events.push('written');
          return end(...args);
        }) as typeof end;
        done();
      });
      app.get('/', async () => {
        setImmediate(() => events.push('same turn, later callback'));
        events.push('made');
        return { ok: true };
      });
    });
    const res = await fetch(url(app, '/'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(events).toEqual(['made', 'same turn, later callback', 'written']);
  });

  it('writes the responses of one turn together; one failing write closes only its connection', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let waiting = 0;
    const written: string[] = [];
    app = await serve((app) => {
      app.addHook('onRequest', (request, reply, done) => {
        const end = reply.raw.end.bind(reply.raw);
        reply.raw.end = ((...args: Parameters<typeof end>) => {
          if (request.url === '/boom') throw new Error('the socket refused the write');
          written.push(request.url);
          return end(...args);
        }) as typeof end;
        done();
      });
      // the three handlers resume in one turn, when the third request has arrived
      app.get('/:name', async (request) => {
        if (++waiting === 3) release();
        await gate;
        return { name: (request.params as { name: string }).name };
      });
    });
    const [a, boom, b] = await Promise.allSettled(['/a', '/boom', '/b'].map(async (path) => (await fetch(url(app!, path))).json()));
    expect(a).toEqual({ status: 'fulfilled', value: { name: 'a' } });
    expect(b).toEqual({ status: 'fulfilled', value: { name: 'b' } });
    expect(boom.status).toBe('rejected');
    expect(written.sort()).toEqual(['/a', '/b']);
    // the server goes on answering
    expect(await (await fetch(url(app, '/c'))).json()).toEqual({ name: 'c' });
  });
});
