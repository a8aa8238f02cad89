// A scripted OpenAI-compatible streaming chat-completions server on 127.0.0.1. DSH's deepseek
// adapter POSTs `${DEEPSEEK_BASE_URL}/chat/completions` with `stream: true` and reads SSE `data:`
// chunks ending in `data: [DONE]`. Each request is answered by the test's script; the session
// title request (thinking disabled, max_tokens 64, no tools) is answered automatically.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_calls?: readonly {
    id: string;
    function: { name: string; arguments: string };
  }[];
  readonly tool_call_id?: string;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly { function: { name: string } }[];
  readonly max_tokens?: number;
  readonly [key: string]: unknown;
}

export type Reply = (
  | { readonly text: string }
  | { readonly toolCalls: readonly { readonly name: string; readonly arguments: unknown }[] }
  | { readonly status: number; readonly body: string }
) & {
  /** Hold the response this long first (a slow child). */
  readonly delayMs?: number;
};

/** Answers one request; `undefined` means "not scripted" and gets a 500 (the test sees it). */
export type Script = (request: ChatRequest, view: RequestView) => Reply | undefined;

/** Helpers over a request, so scripts read like the conversation they answer. */
export interface RequestView {
  /** Concatenated text of every user message (task, runtime context, relays). */
  readonly userText: string;
  /** The system prompt text. */
  readonly systemText: string;
  readonly toolNames: readonly string[];
  /** Tool results already in the conversation, in order, as raw text. */
  readonly toolResults: readonly { name: string | undefined; text: string }[];
  /** Number of assistant turns already in the conversation. */
  readonly assistantTurns: number;
}

export interface ModelServer {
  readonly url: string;
  readonly requests: ChatRequest[];
  readonly unscripted: ChatRequest[];
  setScript(script: Script): void;
  close(): Promise<void>;
}

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
      )
      .join('');
  return '';
};

export function viewOf(request: ChatRequest): RequestView {
  const names = new Map<string, string>();
  let assistantTurns = 0;
  const toolResults: { name: string | undefined; text: string }[] = [];
  for (const m of request.messages) {
    if (m.role === 'assistant') {
      assistantTurns += 1;
      for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
    }
    if (m.role === 'tool')
      toolResults.push({ name: names.get(m.tool_call_id ?? ''), text: textOf(m.content) });
  }
  return {
    userText: request.messages
      .filter((m) => m.role === 'user')
      .map((m) => textOf(m.content))
      .join('\n'),
    systemText: request.messages
      .filter((m) => m.role === 'system')
      .map((m) => textOf(m.content))
      .join('\n'),
    toolNames: (request.tools ?? []).map((t) => t.function.name),
    toolResults,
    assistantTurns,
  };
}

const isTitleRequest = (r: ChatRequest, v: RequestView): boolean =>
  (r.tools === undefined || r.tools.length === 0) && /Generate the session title/i.test(v.userText);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

let callSeq = 0;

function sse(reply: Exclude<Reply, { status: number }>): string {
  const id = `chatcmpl-${++callSeq}`;
  const chunk = (delta: unknown, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let out = chunk({ role: 'assistant' }, null);
  if ('text' in reply) {
    out += chunk({ content: reply.text }, null);
    out += chunk({}, 'stop');
  } else {
    reply.toolCalls.forEach((c, index) => {
      out += chunk(
        {
          tool_calls: [
            {
              index,
              id: `call_${callSeq}_${index}`,
              type: 'function',
              function: { name: c.name, arguments: JSON.stringify(c.arguments) },
            },
          ],
        },
        null,
      );
    });
    out += chunk({}, 'tool_calls');
  }
  out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

export async function startModelServer(initial?: Script): Promise<ModelServer> {
  let script: Script = initial ?? (() => undefined);
  const requests: ChatRequest[] = [];
  const unscripted: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end('not found');
        return;
      }
      const request = JSON.parse(body) as ChatRequest;
      const view = viewOf(request);
      let reply: Reply | undefined;
      if (isTitleRequest(request, view)) reply = { text: 'Workflow test session' };
      else {
        requests.push(request);
        try {
          reply = script(request, view);
        } catch (error) {
          reply = { status: 500, body: String(error) };
        }
      }
      if (reply === undefined) {
        unscripted.push(request);
        reply = { status: 500, body: 'unscripted request' };
      }
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply?.delayMs));
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(sse(reply));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unscripted,
    setScript(next) {
      script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
