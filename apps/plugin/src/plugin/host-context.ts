// The plugin's view of the Cordis context DSH hands to `apply`, read structurally: the plugin has
// no runtime `@deepseek-ai/*` import, so it loads from any path and a host upgrade cannot break
// its module graph. `inject` lists only always-mounted services; optional ones go through `get`.
import type {
  HostAgent,
  HostApproval,
  HostJobs,
  HostSandboxPolicy,
  HostSubagents,
  HostUserQuestions,
} from '@wf/dsh-adapter';
import type { AgentEvents } from './native-workflow.js';

export interface ToolExec {
  readonly agent?: HostAgent;
  readonly signal: AbortSignal;
  readonly parent?: unknown;
  readonly callId?: string;
}

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly output: {
    readonly schema: Record<string, unknown>;
    render(args: unknown, value: unknown): { type: 'text'; text: string }[];
  };
  execute(args: unknown, exec: ToolExec): Promise<unknown>;
}

export interface CommandInvocation {
  readonly agent: HostAgent;
  readonly rawInput: string;
  readonly signal: AbortSignal;
}

export type CommandResult = { kind: 'success'; text?: string } | { kind: 'error'; text: string };

export interface PluginHost extends AgentEvents {
  readonly tools: {
    register(definition: ToolDefinition): () => void;
    schemas(scope?: unknown): readonly { readonly name: string }[];
  };
  readonly subagents: HostSubagents;
  readonly systemPrompt: {
    section(section: { name: string; order: number; text: string }): () => void;
    /** Dynamic per-request context (rc.8 has it); feature-detected. */
    context?(context: {
      name: string;
      order: number;
      text: (assembly: { agent?: HostAgent }) => string;
    }): () => void;
  };
  readonly commands: {
    register(definition: {
      name: string;
      description: string;
      input?: { hint: string };
      handler(invocation: CommandInvocation): CommandResult | Promise<CommandResult>;
    }): () => void;
  };
  get(name: string): unknown;
  effect(execute: () => () => unknown, label?: string): unknown;
}

export interface OptionalServices {
  readonly approval: HostApproval | undefined;
  readonly userQuestions: HostUserQuestions | undefined;
  readonly jobs: HostJobs | undefined;
  readonly sandboxPolicy: HostSandboxPolicy | undefined;
}

const has = (value: unknown, method: string): boolean =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Record<string, unknown>)[method] === 'function';

/** Reads the optional services at call time (they may mount after us, or never). */
export function optionalServices(ctx: PluginHost): OptionalServices {
  const get = (name: string, method: string): unknown => {
    try {
      const value = ctx.get(name);
      return has(value, method) ? value : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    approval: get('approval', 'request') as HostApproval | undefined,
    userQuestions: get('userQuestions', 'ask') as HostUserQuestions | undefined,
    jobs: get('jobs', 'start') as HostJobs | undefined,
    sandboxPolicy: get('sandboxPolicy', 'resolve') as HostSandboxPolicy | undefined,
  };
}
