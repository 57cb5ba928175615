import net from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL), which a test can cut like a network outage. */
export interface TcpProxy {
  /** The port the proxy listens on. */
  port: number;
  /** Rewrites a URL of the target (`postgres://…@127.0.0.1:5432/db`) to go through the proxy. */
  via(url: string): string;
  /** Drops every open connection and refuses new ones (accepted, then closed at once) until {@link restore}. */
  cut(): void;
  /** Lets connections through again. */
  restore(): void;
  close(): Promise<void>;
}

/** Starts a {@link TcpProxy} forwarding to `target` (host and port). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    via(url) {
      const rewritten = new URL(url);
      rewritten.hostname = '127.0.0.1';
      rewritten.port = String(port);
      return rewritten.toString();
    },
    cut() {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      refusing = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
