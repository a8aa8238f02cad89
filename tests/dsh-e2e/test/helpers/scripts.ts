// The scripted model's parts the real-host suites share: the parent runs given tool calls one per
// step and then echoes every tool result (so stdout carries what the tools returned), children
// answer per angle or through `structured_output`.
import type { RequestView, Script } from './model-server.js';

/** The parent's final answer echoes every tool result, so stdout carries what the tools returned. */
export const echo = (v: RequestView) => ({
  text: `RESULTS ${JSON.stringify(v.toolResults.map((t) => t.text))}`,
});
export const results = (stdout: string): string[] => {
  const m = /RESULTS (.*)$/m.exec(stdout);
  return m?.[1] ? (JSON.parse(m[1]) as string[]) : [];
};
/** Children answer `finding for <angle>`; the parent runs the given tool calls, one per step. */
export function scenario(
  marker: string,
  calls: ((v: RequestView) => { name: string; arguments: unknown })[],
  child?: Script,
): Script {
  return (request, v) => {
    if (!v.userText.includes(marker)) {
      if (child) return child(request, v);
      const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
      return m ? { text: `finding for ${m[1]}` } : undefined;
    }
    const next = calls[v.toolResults.length];
    return next ? { toolCalls: [next(v)] } : echo(v);
  };
}

/** A value satisfying a (DSH-subset) JSON schema: lets any structured child answer. */
function sample(schema: Record<string, unknown> | undefined): unknown {
  if (!schema) return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.oneOf)) return sample(schema.oneOf[0] as Record<string, unknown>);
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      const out: Record<string, unknown> = {};
      for (const k of (schema.required ?? []) as string[]) out[k] = sample(props[k]);
      return out;
    }
    case 'array':
      return [];
    case 'string':
      return 'ok';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'ok';
  }
}

/** A child that answers through `structured_output` when it has one, else with text. */
export const anyChild: Script = (request, v) => {
  const tool = (request.tools ?? []).find((t) => t.function.name === 'structured_output') as
    | { function: { name: string; parameters?: Record<string, unknown> } }
    | undefined;
  if (tool)
    return {
      toolCalls: [{ name: 'structured_output', arguments: sample(tool.function.parameters) }],
    };
  return { text: `reviewed: no issues (${v.assistantTurns})` };
};
