// An HTTP/1.1 load balancer in front of N worker processes: what the server registers as the one
// deployment address (registered with use_http_11, request-response). Each request goes to the
// next live worker (round robin per request, not per connection: the server keeps a few
// connections open and reuses them, so a TCP balancer left most of the work on one worker); a
// refused connect tries the next one, as a real balancer's health check would. Request bodies are
// complete messages in request-response mode, so each is buffered before it is sent (a refused
// connect can then go to another worker).
import {
  Agent,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
  createServer,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Balancer {
  readonly url: string;
  /**
   * New requests go to these workers. With `dropOpen`, open connections are closed too, which
   * cuts any request in flight (the server retries it: a child may re-run); use it only between
   * phases with nothing in flight.
   */
  setBackends(ports: readonly number[], options?: { dropOpen?: boolean }): void;
  close(): Promise<void>;
}

// Hop-by-hop headers (RFC 9110 7.6.1) are not forwarded; the body goes with its length.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
]);

function forwardHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

export async function startBalancer(initial: readonly number[]): Promise<Balancer> {
  let backends = [...initial];
  let next = 0;
  let agent = new Agent({ keepAlive: true });
  const clients = new Set<Socket>();

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tries: number) => {
    if (tries >= backends.length || backends.length === 0) {
      res.destroy();
      return;
    }
    const port = backends[next++ % backends.length] as number;
    const upstream = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.url,
        headers: { ...forwardHeaders(req.headers), 'content-length': String(body.length) },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwardHeaders(answer.headers));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      // Refused: that worker is gone, try the next. Anything later (a worker killed mid-request)
      // cuts the server's request, as a dead worker behind a real balancer would.
      if (e.code === 'ECONNREFUSED' && !res.headersSent) forward(req, res, body, tries + 1);
      else res.destroy();
    });
    upstream.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
    req.on('error', () => res.destroy());
  });
  server.on('connection', (socket: Socket) => {
    clients.add(socket);
    socket.on('close', () => clients.delete(socket));
  });
  // A request may wait minutes for a child: no server-side timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setBackends(ports, options) {
      backends = [...ports];
      if (options?.dropOpen) {
        for (const s of clients) s.destroy();
        agent.destroy();
        agent = new Agent({ keepAlive: true });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of clients) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
