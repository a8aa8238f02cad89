// A TCP load balancer in front of N worker processes: what the server registers as the one
// deployment address. Each connection goes to the next live worker (round robin); a refused
// connect tries the next one, as a real balancer's health check would.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  readonly url: string;
  /**
   * New connections go to these workers. Open ones stay where they are (the server keeps its
   * connections and reuses them) unless `dropOpen`: then they are closed and the server reconnects
   * through the new set. Only with nothing in flight (a cut request is retried: a child may re-run).
   */
  setBackends(ports: readonly number[], options?: { dropOpen?: boolean }): void;
  close(): Promise<void>;
}

export async function startBalancer(initial: readonly number[]): Promise<Balancer> {
  let backends = [...initial];
  let next = 0;
  const sockets = new Set<Socket>();
  const pick = (client: Socket, tries: number) => {
    if (tries >= backends.length || backends.length === 0) {
      client.destroy();
      return;
    }
    const port = backends[next++ % backends.length] as number;
    const upstream = connect(port, '127.0.0.1');
    sockets.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', () => {
      if (!connected) pick(client, tries + 1);
      else client.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      if (connected) client.destroy();
    });
    client.on('close', () => upstream.destroy());
    client.on('error', () => upstream.destroy());
  };
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    pick(client, 0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setBackends(ports, options) {
      backends = [...ports];
      if (options?.dropOpen) for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
