// A host-shaped context for the authoring corpus: the real plugin (engine, QuickJS sandbox,
// catalog and run store on disk, rc.8 Sessions) with only the DSH subagent transport scripted.
// Children answer like a model would: text, or a value shaped by the task's outputSchema.
import type { HostAgent } from '@wf/dsh-adapter';
import type { ToolDefinition } from '../../src/plugin/host-context.js';
import { createTestHost } from '../helpers/host.js';

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
  const children: { label?: string | undefined }[] = [];
  const host = createTestHost({
    cwd,
    onStart: (request) => children.push({ label: request.label }),
    answer: (request) => ({
      text: `Findings for ${request.label ?? 'task'}: looks fine.`,
      structured: request.outputSchema !== undefined ? answerFor(request.outputSchema) : undefined,
    }),
  });
  return {
    tools: host.tools,
    sections: host.sections,
    parent: host.parent,
    children,
    unload: host.unload,
  };
}
