/// <reference path="./ws.d.ts" />
// Boots the real DSH web profile (`dsh --profile web --host 127.0.0.1 --port 0 --no-open`) and
// drives it over its own API the way its browser client does: POST /api/<method> for the RPCs
// (session.create, session.prompt, session.history), the Remote endpoints for slash commands
// (POST /api/commands/execute, `{ args }`), the `/api/events.mux` WebSocket for session events and
// approval prompts, and POST /api/respond to answer an approval.
import { type ChildProcess, spawn } from 'node:child_process';
import WebSocket from 'ws';
import { type BootOptions, dshCommand } from './host.js';

/** One frame of the mux stream (`server-request` envelope; `payload.type` says which). */
export interface MuxFrame {
  readonly rpcId: string;
  readonly payload: {
    readonly type: string;
    readonly sessionId?: string;
    readonly event?: { readonly type: string; readonly seq: number; readonly data: unknown };
    readonly approvalId?: string;
    readonly toolName?: string;
    readonly reason?: string;
    readonly [key: string]: unknown;
  };
}

export interface WebHost {
  /** `http://127.0.0.1:<port>`, from the launcher's own URL line. */
  readonly url: string;
  /** Every mux frame so far. */
  readonly frames: MuxFrame[];
  /** Approval prompts the browser side saw (and answered, when `approval` is set). */
  readonly approvals: { toolName: string; reason: string }[];
  /** The launcher's stdout and stderr so far. */
  output(): string;
  rpc<T = unknown>(method: string, payload: unknown): Promise<T>;
  /** A new session in `cwd`; resolves to its id. */
  createSession(cwd: string): Promise<string>;
  /** `/…` as typed in the browser's composer (the command surface's Remote call). */
  command(sessionId: string, line: string): Promise<{ kind: string; text?: string }>;
  /** A user message; resolves when that turn has ended. */
  promptAndWait(sessionId: string, text: string, timeoutMs?: number): Promise<void>;
  /** The texts of the session's tool results, in order (what the model read). */
  toolResults(sessionId: string): Promise<string[]>;
  /** SIGTERM (DSH disposes its plugins), then the exit code. */
  close(): Promise<number | null>;
}

export interface WebOptions extends BootOptions {
  /** Answer every approval prompt this way (as a person in the browser would). */
  readonly approval?: 'allowed-once' | 'rejected';
  readonly bootTimeoutMs?: number;
}

const json = { 'content-type': 'application/json' };

export async function startWebHost(options: WebOptions): Promise<WebHost> {
  const { command, args, env } = dshCommand('web', options, [
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--no-open',
  ]);
  const child = spawn(command, args, {
    cwd: options.sandbox.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    return await connect(child, options, () => output, exited);
  } catch (error) {
    // rc.8 prints its URL line before a crash at boot: let the process finish, then show why
    const code = await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (code === undefined) child.kill('SIGKILL');
    throw new Error(
      `dsh --profile web did not come up: ${error instanceof Error ? error.message : String(error)}\n${output}`,
    );
  }
}

async function connect(
  child: ChildProcess,
  options: WebOptions,
  output: () => string,
  exited: Promise<number | null>,
): Promise<WebHost> {
  const url = await bootUrl(child, output, options.bootTimeoutMs ?? 90_000);
  let seq = 0;
  const rpc = async <T>(method: string, payload: unknown): Promise<T> => {
    const rpcId = `wf-e2e-${++seq}`;
    const res = await fetch(`${url}/api/${method}`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ type: 'client-request', rpcId, method, payload }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method}: HTTP ${res.status}: ${text}`);
    const body = JSON.parse(text) as {
      result: { ok: true; value: T } | { ok: false; error: { code: string; message: string } };
    };
    if (!body.result.ok)
      throw new Error(`${method}: ${body.result.error.code}: ${body.result.error.message}`);
    return body.result.value;
  };
  const frames: MuxFrame[] = [];
  const approvals: WebHost['approvals'] = [];
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/api/events.mux`);
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as MuxFrame;
    frames.push(frame);
    const p = frame.payload;
    if (p.type !== 'approval/requested') return;
    approvals.push({ toolName: String(p.toolName), reason: String(p.reason ?? '') });
    if (!options.approval) return;
    void fetch(`${url}/api/respond`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        type: 'client-response',
        rpcId: frame.rpcId,
        result: {
          ok: true,
          value: { sessionId: p.sessionId, approvalId: p.approvalId, outcome: options.approval },
        },
      }),
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  // the stream ends with the host; an error after that is not the test's
  socket.on('error', () => {});
  // the browser's readiness handshake: the host answers RPCs
  await rpc('host.describe', {});

  const turnsEnded = (sessionId: string) =>
    frames.filter(
      (f) =>
        f.payload.type === 'session/event' &&
        f.payload.sessionId === sessionId &&
        f.payload.event?.type === 'turn/end',
    ).length;

  const host: WebHost = {
    url,
    frames,
    approvals,
    output,
    rpc,
    async createSession(cwd) {
      return (await rpc<{ sessionId: string }>('session.create', { cwd })).sessionId;
    },
    async command(sessionId, line) {
      const out = await rpc<{ result?: { kind: string; text?: string } }>('commands/execute', {
        args: { agentId: sessionId, line, images: [] },
      });
      if (!out.result) throw new Error(`commands/execute: ${line}: not a command here`);
      return out.result;
    },
    async promptAndWait(sessionId, text, timeoutMs = 120_000) {
      const before = turnsEnded(sessionId);
      await rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text }] });
      const deadline = Date.now() + timeoutMs;
      while (turnsEnded(sessionId) === before) {
        if (Date.now() > deadline)
          throw new Error(`no turn/end within ${timeoutMs} ms:\n${output().slice(-4000)}`);
        if (child.exitCode !== null) throw new Error(`dsh exited ${child.exitCode}:\n${output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async toolResults(sessionId) {
      const history = await rpc<{ events: { event: { type: string; data: unknown } }[] }>(
        'session.history',
        { sessionId },
      );
      return history.events
        .filter((e) => e.event.type === 'tool/result')
        .map((e) => toolResultText(e.event.data));
    },
    async close() {
      socket.close();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      }
      return child.exitCode;
    },
  };
  return host;
}

/** Waits for the launcher's `dsh web: <url>` line; fails with its output if it exits first. */
async function bootUrl(
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /dsh web: (http:\/\/127\.0\.0\.1:\d+)/.exec(output());
    if (m?.[1]) return m[1];
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `dsh --profile web exited (${child.exitCode ?? child.signalCode}) before serving:\n${output()}`,
      );
    if (Date.now() > deadline)
      throw new Error(`dsh --profile web did not serve within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The text a `tool/result` event carries (the tool's rendered content). */
function toolResultText(data: unknown): string {
  const message = (data as { message?: { content?: unknown[] } })?.message;
  const part = (message?.content ?? [])[0] as { content?: { text?: string }[] } | undefined;
  return (part?.content ?? []).map((c) => c.text ?? '').join('');
}
