// The three model-facing tools. DSH's raw `tools.register` sends the parameter schema to the
// model but does not validate arguments, so each tool validates its own with valibot and
// answers a bad call with a message naming the field.
import { PATTERN_IDS, WORKFLOW_NAME_PATTERN } from '@wf/bridge';
import * as v from 'valibot';
import type { HostAgent } from '@wf/dsh-adapter';
import { failure } from '@wf/errors';
import { PluginError } from './errors.js';
import type { ToolDefinition, ToolExec } from './host-context.js';
import type { Manager } from './manage.js';
import type { WorkflowService } from './service.js';

const ANY_JSON = { description: 'any JSON value' };

/**
 * The inline manifest as the model sees it: every field optional (the plugin fills in the
 * rest), the allowed values listed, no other keys.
 */
export const INLINE_MANIFEST_PARAMETER = {
  type: 'object',
  description:
    'Optional for inline source; every field is optional and missing ones get defaults. No other keys are accepted.',
  properties: {
    name: {
      type: 'string',
      pattern: WORKFLOW_NAME_PATTERN.source,
      description:
        'kebab-case: a lowercase letter, then lowercase letters, digits or hyphens (max 64). Default inline-workflow.',
    },
    description: { type: 'string', description: 'One line on what the workflow does.' },
    phases: {
      type: 'array',
      items: { type: 'string' },
      description: 'Phase names the workflow uses with wf.phase (informational). Default ["main"].',
    },
    readOnly: {
      type: 'boolean',
      description: 'true when no child may modify files. Default false.',
    },
    maxAgents: { type: 'integer', minimum: 1, description: 'Most children the run may start.' },
    maxConcurrency: {
      type: 'integer',
      minimum: 1,
      description: 'Most children at once; at most maxAgents.',
    },
    plannedAgents: {
      type: 'integer',
      minimum: 1,
      description: 'Expected children; at most maxAgents.',
    },
    tokenBudget: { type: 'integer', minimum: 1, description: 'Token budget for all children.' },
    patterns: {
      type: 'array',
      items: { type: 'string', enum: [...PATTERN_IDS] },
      description:
        'Orchestration patterns used (informational). Default ["fan-out-and-synthesize"].',
    },
  },
  additionalProperties: false,
} as const;

export const RunArgs = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.minLength(1))),
  source: v.optional(v.pipe(v.string(), v.minLength(1))),
  manifest: v.optional(v.record(v.string(), v.unknown())),
  args: v.optional(v.unknown()),
  wait: v.optional(v.boolean()),
});

export const MANAGE_ACTIONS = [
  'list',
  'show',
  'events',
  'pause',
  'resume',
  'stop',
  'rerun',
  'resume-run',
  'save',
  'rename',
  'delete',
  'prune',
  'revise',
  'archived',
  'restore',
  'report',
] as const;

export const ManageArgs = v.strictObject({
  action: v.picklist(MANAGE_ACTIONS),
  target: v.optional(v.string()),
  name: v.optional(v.string()),
  scope: v.optional(v.picklist(['project', 'personal'])),
  args: v.optional(v.unknown()),
  source: v.optional(v.string()),
  manifest: v.optional(v.record(v.string(), v.unknown())),
  wait: v.optional(v.boolean()),
  keep: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  replace: v.optional(v.boolean()),
});

export class ToolInputError extends PluginError {
  constructor(message: string) {
    super('WF_PLUGIN_INVALID_INPUT', message);
    // shown by DSH as before the error kit: a PluginError with the invalid-input code
    this.name = 'PluginError';
  }
}

export function parseArgs<S extends v.GenericSchema>(
  tool: string,
  schema: S,
  input: unknown,
): v.InferOutput<S> {
  const out = v.safeParse(schema, input ?? {});
  if (out.success) return out.output;
  throw new ToolInputError(
    `${tool}: invalid arguments: ${out.issues.map((i) => `${v.getDotPath(i) ?? '(root)'}: ${i.message}`).join('; ')}`,
  );
}

const text = (value: unknown) => [{ type: 'text' as const, text: JSON.stringify(value, null, 2) }];

/**
 * Children of a workflow must not start workflows through our tools (nesting goes through
 * `wf.workflow`, capped at one level), and DSH hides our tools from them; this is the second
 * lock: a call from any delegated agent is refused.
 */
function callerOf(tool: string, exec: ToolExec): HostAgent {
  const agent = exec.agent;
  if (!agent) throw new ToolInputError(`${tool}: needs a calling agent`);
  const header = agent.session.header as { origin?: unknown };
  if (header.origin === 'subagent')
    throw new ToolInputError(
      `${tool}: not available to child agents; a workflow nests through wf.workflow`,
    );
  return agent;
}

export function createTools(service: WorkflowService, manager: Manager): ToolDefinition[] {
  const { listToolName, runToolName, manageToolName } = service.config;
  return [
    {
      name: listToolName,
      description:
        'List runnable workflows: built-in patterns, then project and personal catalog entries.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      output: { schema: ANY_JSON, render: (_a, value) => text(value) },
      async execute(args, exec) {
        parseArgs(listToolName, v.strictObject({}), args);
        return service.list(callerOf(listToolName, exec));
      },
    },
    {
      name: runToolName,
      description:
        'Run a workflow: a named one (`name`) or inline source (`source` + `manifest`), with `args`. `wait: false` runs it in the background and returns the run id.',
      parameters: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'A workflow from the list tool.' },
          source: {
            type: 'string',
            description: 'Inline workflow: `async function run(wf, args) { ... }`.',
          },
          manifest: INLINE_MANIFEST_PARAMETER,
          args: { description: 'JSON arguments passed to run(wf, args).' },
          wait: { type: 'boolean', description: 'Wait for the result (default true).' },
        },
        additionalProperties: false,
      },
      output: {
        schema: ANY_JSON,
        render: (_a, value) => [{ type: 'text', text: service.renderResult(value) }],
      },
      async execute(args, exec) {
        const input = parseArgs(runToolName, RunArgs, args);
        const agent = callerOf(runToolName, exec);
        const granted = manager.consumeGrant(agent, input);
        const out = await service.start(
          {
            ...(input.name ? { name: input.name } : {}),
            ...(input.source ? { source: input.source } : {}),
            ...(input.manifest ? { manifest: input.manifest } : {}),
            ...(input.args !== undefined ? { args: input.args } : {}),
            wait: input.wait !== false,
          },
          { agent, signal: exec.signal, preApproved: await granted },
        );
        if (!out.ok) throw PluginError.fromFailure(out.error);
        return out.reply;
      },
    },
    {
      name: manageToolName,
      description: `Manage workflow runs and saved workflows. Actions: ${MANAGE_ACTIONS.join(', ')}.`,
      parameters: {
        type: 'object',
        properties: {
          action: { type: 'string', enum: [...MANAGE_ACTIONS] },
          target: {
            type: 'string',
            description:
              'A run id, a run alias or `last` (the latest run), a saved workflow name, or (restore) an archived version id from `archived`.',
          },
          name: {
            type: 'string',
            description: 'New name (save, rename; restore: restore under this name).',
          },
          scope: { type: 'string', enum: ['project', 'personal'] },
          args: { description: 'JSON args for rerun.' },
          source: { type: 'string', description: 'Revised source (revise).' },
          manifest: { type: 'object', description: 'Revised manifest (revise).' },
          wait: { type: 'boolean' },
          keep: { type: 'integer', description: 'Runs to keep (prune).' },
          replace: {
            type: 'boolean',
            description: 'Replace an existing saved workflow (save, revise, restore).',
          },
        },
        required: ['action'],
        additionalProperties: false,
      },
      output: { schema: ANY_JSON, render: (_a, value) => text(value) },
      async execute(args, exec) {
        const input = parseArgs(manageToolName, ManageArgs, args);
        // a project whose run store cannot open throws a coded PluginError; shown like a failure
        const out = await manager
          .manage(callerOf(manageToolName, exec), input, exec.signal)
          .catch((e: unknown) => {
            if (PluginError.is(e)) return failure(e.code, e.message);
            throw e;
          });
        if (!out.ok) throw PluginError.fromFailure(out.error);
        return out.value;
      },
    },
  ];
}
