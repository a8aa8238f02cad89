// A host-shaped context for the authoring corpus: the real plugin (engine, QuickJS sandbox,
// catalog and run store on disk, rc.8 Sessions) with only the DSH subagent transport scripted.
// Children answer like a model would: text, or a value shaped by the task's outputSchema.
import { Context } from '@deepseek-ai/cordis';
import { SessionStore } from '@deepseek-ai/dsh-session';
import type { HostAgent, HostSubagentRun } from '@wf/dsh-adapter';
import type { PluginHost, ToolDefinition } from '../../src/plugin/host-context.js';
import { apply } from '../../src/plugin/plugin.js';
import { parseConfig } from '../../src/index.js';

const store = new SessionStore(new Context());

/** The smallest value a JSON Schema accepts, as a child following the schema would answer. */
export function answerFor(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return 'ok';
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, unknown>;
      for (const [k, sub] of Object.entries(props)) out[k] = answerFor(sub);
      return out;
    }
    case 'array':
      return [answerFor(s.items)];
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'ok';
  }
}

export interface ModelHost {
  readonly tools: Map<string, ToolDefinition>;
  readonly sections: { name: string; text: string }[];
  readonly parent: HostAgent;
  readonly children: { label?: string | undefined }[];
  unload(): Promise<void>;
}

export function createModelHost(cwd: string): ModelHost {
  const tools = new Map<string, ToolDefinition>();
  const sections: { name: string; text: string }[] = [];
  const children: { label?: string | undefined }[] = [];
  let disposer: (() => unknown) | undefined;
  const parentSession = store.create(undefined, { meta: { cwd } });
  const parent: HostAgent = { id: String(parentSession.id), session: parentSession };
  const services: Record<string, unknown> = {
    approval: { request: async () => 'allowed-once' },
    sandboxPolicy: { resolve: () => ({ mode: 'workspace-write', workspaceRoot: cwd }) },
  };
  const ctx: PluginHost = {
    tools: {
      register(def) {
        tools.set(def.name, def);
        return () => tools.delete(def.name);
      },
      schemas: () =>
        ['read', 'grep', 'glob', 'bash', 'write', ...tools.keys()].map((n) => ({ name: n })),
    },
    subagents: {
      getProvider: (n) =>
        n === 'spawn'
          ? {
              name: 'spawn',
              capabilities: {
                outputSchema: true,
                depthLimit: true,
                toolFilter: true,
                persona: true,
              },
            }
          : undefined,
      async start(
        _provider,
        request: { label?: string; outputSchema?: unknown; prompt: { text: string }[] },
      ): Promise<HostSubagentRun> {
        children.push({ label: request.label });
        const session = store.create(undefined, {
          meta: { cwd, origin: 'subagent', parentSession: parentSession.id },
        });
        const text = `Findings for ${request.label ?? 'task'}: looks fine.`;
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
        const structured =
          request.outputSchema !== undefined ? { structured: answerFor(request.outputSchema) } : {};
        return {
          id: String(session.id),
          localAgent: { id: String(session.id), session },
          result: Promise.resolve({
            output: [{ type: 'text', text }],
            stopReason: 'completed',
            ...structured,
          }),
          dispose: async () => {},
        };
      },
    },
    systemPrompt: {
      section(s) {
        sections.push(s);
        return () => {};
      },
    },
    commands: { register: () => () => {} },
    get: (n) => services[n],
    effect(execute) {
      disposer = execute();
      return disposer;
    },
  };
  const parsed = parseConfig({});
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  apply(ctx, parsed.config);
  return {
    tools,
    sections,
    parent,
    children,
    async unload() {
      await disposer?.();
    },
  };
}
