// Test doubles built from the REAL host pieces where they run on Node 20: sessions are real
// `@deepseek-ai/dsh-session` Sessions (real append validation, real frozen `events` snapshot);
// only the subagent transport is scripted, typed against the real rc.8 contracts.
import { Context } from '@deepseek-ai/cordis';
import { type Session, SessionStore } from '@deepseek-ai/dsh-session';
import type {
  SubagentCapabilities,
  SubagentResult,
  SubagentStartRequest,
} from '@deepseek-ai/dsh-subagent';
import type { HostAgent, HostSubagentRun, HostSubagents, HostTools } from '../src/index.js';

export const store = new SessionStore(new Context());

export function realSession(cwd = '/tmp/wf-adapter-test'): Session {
  return store.create(undefined, { meta: { cwd } });
}

export interface FakeAgent extends HostAgent {
  readonly session: Session;
  readonly followups: string[];
  readonly steered: string[];
  cancelled: number;
  onFollowup?: (text: string, agent: FakeAgent) => void;
}

export function fakeAgent(session = realSession()): FakeAgent {
  const agent: FakeAgent = {
    id: String(session.id),
    session,
    followups: [],
    steered: [],
    cancelled: 0,
    followup(message: { content: { text: string }[] }) {
      const text = message.content[0]?.text ?? '';
      agent.followups.push(text);
      agent.onFollowup?.(text, agent);
    },
    steer(message: { content: { text: string }[] }) {
      agent.steered.push(message.content[0]?.text ?? '');
    },
    whenIdle: async () => {},
    cancel() {
      agent.cancelled += 1;
    },
  };
  return agent;
}

let turn = 0;
/** Appends the events a real child turn leaves: a tool call/result pair and a final message. */
export function childTurn(
  session: Session,
  input: {
    text: string;
    usage?: { inputTokens: number; outputTokens: number; cacheReadTokens?: number };
    calls?: { name: string; args: unknown; ok?: boolean }[];
  },
): void {
  turn += 1;
  session.append('turn/start', { turn });
  let n = 0;
  for (const c of input.calls ?? []) {
    const callId = `call-${turn}-${n++}` as never;
    session.append('tool/call', {
      turn,
      step: 0,
      callId,
      name: c.name,
      arguments: JSON.stringify(c.args),
    });
    session.append(
      'tool/result',
      {
        turn,
        step: 0,
        message: {
          id: `m-${turn}-${n}`,
          role: 'user',
          source: { kind: 'tool' },
          content: [
            {
              type: 'tool-result',
              toolCallId: callId,
              content: [{ type: 'text', text: 'ok' }],
              isError: c.ok === false,
            },
          ],
        } as never,
      },
      { surfaceOp: 'append' },
    );
  }
  session.append(
    'assistant/message',
    {
      turn,
      step: 1,
      message: {
        id: `a-${turn}`,
        role: 'assistant',
        source: { kind: 'model', provider: 'test', model: 'test' },
        content: [{ type: 'text', text: input.text }],
      } as never,
      ...(input.usage ? { usage: input.usage } : {}),
    },
    { surfaceOp: 'append' },
  );
  session.append('turn/end', { turn, reason: { kind: 'completed' } as never });
}

/** What the child does once started; returns the host result. */
export type ScriptedChild = (
  agent: FakeAgent,
  request: SubagentStartRequest,
) => Promise<SubagentResult> | SubagentResult;

export interface FakeSubagents extends HostSubagents {
  readonly starts: { provider: string; request: SubagentStartRequest }[];
  readonly disposed: string[];
  readonly children: FakeAgent[];
}

export function fakeSubagents(
  providers: Record<string, SubagentCapabilities>,
  child: ScriptedChild,
  options: { rejectStart?: Error } = {},
): FakeSubagents {
  const starts: { provider: string; request: SubagentStartRequest }[] = [];
  const disposed: string[] = [];
  const children: FakeAgent[] = [];
  return {
    starts,
    disposed,
    children,
    getProvider: (name) =>
      providers[name]
        ? { name, capabilities: providers[name], inheritsParentContext: false }
        : undefined,
    async start(provider: string, request: SubagentStartRequest): Promise<HostSubagentRun> {
      starts.push({ provider, request });
      if (options.rejectStart) throw options.rejectStart;
      const agent = fakeAgent();
      children.push(agent);
      const result = Promise.resolve().then(() => child(agent, request));
      return {
        id: agent.id,
        localAgent: agent,
        result,
        dispose: async () => {
          disposed.push(agent.id);
        },
      };
    },
  };
}

export const FULL_CAPS: SubagentCapabilities = {
  outputSchema: true,
  depthLimit: true,
  toolFilter: true,
  persona: true,
};

export const HEADLESS_TOOLS = [
  'bash',
  'edit',
  'glob',
  'grep',
  'read',
  'read_image',
  'subagent',
  'web_search',
  'workflow',
  'write',
  'workflow_list',
  'run_workflow',
  'workflow_manage',
];

export const fakeTools = (
  names: readonly string[] = HEADLESS_TOOLS,
): HostTools & { scopes: unknown[] } => {
  const scopes: unknown[] = [];
  return {
    scopes,
    schemas(scope?: unknown) {
      scopes.push(scope);
      return names.map((name) => ({ name }));
    },
  };
};
