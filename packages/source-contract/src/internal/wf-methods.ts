// The `wf` method list: the single place this package names WorkflowApi members.
// @wf/bridge will own this list (its WF_METHODS) and generate this file from it; until then edit
// it here only, and keep the kinds in step with the bridge's WorkflowApi.

/**
 * `agent`: starts child agents (counts as agent work; its promise must be observed).
 * `control`: orchestration over tasks and phases. `io`: effects and reads. `value`: read-only data.
 */
export const WF_METHODS = [
  { name: 'runAgent', kind: 'agent' },
  { name: 'spawnAgent', kind: 'agent' },
  { name: 'synthesize', kind: 'agent' },
  { name: 'workflow', kind: 'agent' },
  { name: 'phase', kind: 'control' },
  { name: 'wait', kind: 'control' },
  { name: 'snapshot', kind: 'control' },
  { name: 'output', kind: 'control' },
  { name: 'send', kind: 'control' },
  { name: 'stop', kind: 'control' },
  { name: 'parallel', kind: 'control' },
  { name: 'pipeline', kind: 'control' },
  { name: 'artifact', kind: 'io' },
  { name: 'log', kind: 'io' },
  { name: 'readFile', kind: 'io' },
  { name: 'lastFailure', kind: 'value' },
  { name: 'budget', kind: 'value' },
  { name: 'runId', kind: 'value' },
  { name: 'args', kind: 'value' },
] as const;

export type WfMethodName = (typeof WF_METHODS)[number]['name'];
export type WfMethodKind = (typeof WF_METHODS)[number]['kind'];

export const WF_METHOD_NAMES: ReadonlySet<string> = new Set(WF_METHODS.map((m) => m.name));
export const AGENT_METHOD_NAMES: ReadonlySet<string> = new Set(
  WF_METHODS.filter((m) => m.kind === 'agent').map((m) => m.name),
);
