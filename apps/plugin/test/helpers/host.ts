// The one host-shaped context the plugin tests apply the real plugin to: real @wf engine, sandbox,
// catalog and run store on disk, real rc.8 `Session`s for the parent and the children; only the
// DSH subagent transport is scripted (tests/dsh-e2e runs the real host). Each test file keeps its
// own view of what it records (starts, approvals) through the hooks below.
import { Context } from '@deepseek-ai/cordis';
import { type Session, SessionStore } from '@deepseek-ai/dsh-session';
import type { HostAgent, HostSubagentRun } from '@wf/dsh-adapter';
import { parseConfig } from '../../src/index.js';
import type { PluginHost, ToolDefinition } from '../../src/plugin/host-context.js';
import { apply } from '../../src/plugin/plugin.js';

/** One store for every session a test makes: its ids count up, so two stores would collide. */
export const store = new SessionStore(new Context());

export type CommandHandler = (inv: {
  agent: HostAgent;
  rawInput: string;
  signal: AbortSignal;
}) => Promise<unknown>;

/** What a test sees of one child start request. */
export interface StartRequest {
  label?: string;
  toolFilter?: unknown;
  agentOptions?: unknown;
  outputSchema?: unknown;
  prompt: { text: string }[];
}

export interface TestHostOptions {
  /** The workspace: the sessions' cwd and the sandbox policy's root. */
  readonly cwd: string;
  /** Plugin config, through the public `parseConfig`. */
  readonly config?: Record<string, unknown> | undefined;
  /** Services `ctx.get` hands out; default: approval allowed-once, workspace-write sandbox. */
  readonly services?: Record<string, unknown>;
  /** The host's own tools ahead of the plugin's in `tools.schemas()`. */
  readonly hostTools?: readonly string[];
  /** The spawn provider's capabilities. */
  readonly capabilities?: Record<string, boolean>;
  /** Extra members of the parent agent (followup, inject, ...). */
  readonly parentExtra?: (session: Session) => Partial<HostAgent>;
  /** Called first on every child start. */
  readonly onStart?: (request: StartRequest) => void;
  /** The child's answer; default `done: <label>`. */
  readonly answer?: (request: StartRequest) => { text: string; structured?: unknown };
  /** Whether the child appends its answer to its session as a model message (default true). */
  readonly appendAnswer?: boolean;
  /** Children wait on this before answering (read at each start). */
  readonly gate?: () => Promise<void>;
  /** Throw when a tool name is registered twice. */
  readonly rejectDuplicateTools?: boolean;
  /** Link child sessions to the parent session in their meta (default true). */
  readonly linkParent?: boolean;
}

/** A dynamic prompt context the plugin registered: `text` is evaluated per model request. */
export interface TestContext {
  readonly name: string;
  readonly order: number;
  text(assembly: { agent?: HostAgent }): string;
}

export interface TestHost {
  readonly ctx: PluginHost;
  readonly tools: Map<string, ToolDefinition>;
  readonly sections: { name: string; order: number; text: string }[];
  readonly contexts: TestContext[];
  readonly commands: Map<string, CommandHandler>;
  readonly parent: HostAgent;
  readonly parentSession: Session;
  unload(): Promise<void>;
}

const FULL_CAPABILITIES = { outputSchema: true, depthLimit: true, toolFilter: true, persona: true };

export function createTestHost(options: TestHostOptions): TestHost {
  const { cwd } = options;
  const tools = new Map<string, ToolDefinition>();
  const sections: { name: string; order: number; text: string }[] = [];
  const contexts: TestContext[] = [];
  const commands = new Map<string, CommandHandler>();
  let disposer: (() => unknown) | undefined;
  const parentSession = store.create(undefined, { meta: { cwd } });
  const parent: HostAgent = {
    id: String(parentSession.id),
    session: parentSession,
    ...options.parentExtra?.(parentSession),
  };
  const services = options.services ?? {
    approval: { request: async () => 'allowed-once' },
    sandboxPolicy: { resolve: () => ({ mode: 'workspace-write', workspaceRoot: cwd }) },
  };
  const hostTools = options.hostTools ?? ['read', 'grep', 'glob', 'bash', 'write'];
  const answer =
    options.answer ??
    ((request: StartRequest): { text: string; structured?: unknown } => ({
      text: `done: ${request.label}`,
    }));
  const ctx: PluginHost = {
    tools: {
      register(def) {
        if (options.rejectDuplicateTools && tools.has(def.name)) {
          throw new Error(`duplicate tool ${def.name}`);
        }
        tools.set(def.name, def);
        return () => tools.delete(def.name);
      },
      schemas: () => [...hostTools, ...tools.keys()].map((n) => ({ name: n })),
    },
    subagents: {
      getProvider: (n) =>
        n === 'spawn'
          ? { name: 'spawn', capabilities: options.capabilities ?? FULL_CAPABILITIES }
          : undefined,
      async start(_provider, request: StartRequest): Promise<HostSubagentRun> {
        options.onStart?.(request);
        const session = store.create(undefined, {
          meta:
            options.linkParent === false
              ? { cwd, origin: 'subagent' }
              : { cwd, origin: 'subagent', parentSession: parentSession.id },
        });
        const { text, structured } = answer(request);
        const reply = () => {
          if (options.appendAnswer !== false) {
            session.append(
              'assistant/message',
              {
                turn: 1,
                step: 1,
                message: {
                  id: `m-${session.id}`,
                  role: 'assistant',
                  source: { kind: 'model', provider: 't', model: 't' },
                  content: [{ type: 'text', text }],
                } as never,
                usage: { inputTokens: 10, outputTokens: 5 },
              },
              { surfaceOp: 'append' },
            );
          }
          return {
            output: [{ type: 'text' as const, text }],
            stopReason: 'completed',
            ...(structured !== undefined ? { structured } : {}),
          };
        };
        return {
          id: String(session.id),
          localAgent: { id: String(session.id), session },
          result: options.gate ? options.gate().then(reply) : Promise.resolve(reply()),
          dispose: async () => {},
        };
      },
    },
    systemPrompt: {
      section(s) {
        sections.push(s);
        return () => {};
      },
      context(c) {
        contexts.push(c);
        return () => {};
      },
    },
    commands: {
      register(def) {
        commands.set(def.name, def.handler as never);
        return () => {};
      },
    },
    get: (n) => services[n],
    effect(execute) {
      disposer = execute();
      return disposer;
    },
  };
  const parsed = parseConfig(options.config ?? {});
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  apply(ctx, parsed.config);
  return {
    ctx,
    tools,
    sections,
    contexts,
    commands,
    parent,
    parentSession,
    async unload() {
      await disposer?.();
    },
  };
}
