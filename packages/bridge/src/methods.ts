// The single list of `wf` members. @wf/source-contract's copy is generated from the block below by
// tooling/repo/gen-wf-methods.mjs (which evaluates it as plain JS: keep it free of TS syntax).
import type { WorkflowApi } from './api.js';

/**
 * `agent`: starts child agents (agent work; its promise must be observed).
 * `control`: orchestration over tasks and phases. `data`: effects and reads through the host.
 * `sync`: answered synchronously inside the guest (values and bookkeeping).
 */
export type WfMethodKind = 'agent' | 'control' | 'data' | 'sync';

export interface WfMethod {
  readonly name: keyof WorkflowApi;
  readonly kind: WfMethodKind;
  /** `property` for values (`wf.runId`), `method` for functions. */
  readonly member: 'method' | 'property';
  /** True when the member returns a promise the workflow should await. */
  readonly async: boolean;
  /** True when the member crosses to the host (one sandbox capability, validated by `validateCall`). */
  readonly hostCall: boolean;
}

// BEGIN WF_METHODS
const LIST = [
  { name: 'runId', kind: 'sync', member: 'property', async: false, hostCall: false },
  { name: 'args', kind: 'sync', member: 'property', async: false, hostCall: false },
  { name: 'budget', kind: 'sync', member: 'property', async: false, hostCall: false },
  { name: 'phase', kind: 'control', member: 'method', async: true, hostCall: true },
  { name: 'runAgent', kind: 'agent', member: 'method', async: true, hostCall: true },
  { name: 'spawnAgent', kind: 'agent', member: 'method', async: true, hostCall: true },
  { name: 'wait', kind: 'control', member: 'method', async: true, hostCall: true },
  { name: 'snapshot', kind: 'control', member: 'method', async: true, hostCall: true },
  { name: 'output', kind: 'control', member: 'method', async: true, hostCall: true },
  { name: 'send', kind: 'control', member: 'method', async: true, hostCall: true },
  { name: 'stop', kind: 'control', member: 'method', async: true, hostCall: true },
  { name: 'parallel', kind: 'control', member: 'method', async: true, hostCall: false },
  { name: 'pipeline', kind: 'control', member: 'method', async: true, hostCall: false },
  { name: 'synthesize', kind: 'agent', member: 'method', async: true, hostCall: true },
  { name: 'workflow', kind: 'agent', member: 'method', async: true, hostCall: true },
  { name: 'artifact', kind: 'data', member: 'method', async: true, hostCall: true },
  { name: 'log', kind: 'data', member: 'method', async: false, hostCall: true },
  { name: 'readFile', kind: 'data', member: 'method', async: true, hostCall: true },
  { name: 'lastFailure', kind: 'sync', member: 'method', async: false, hostCall: false },
] as const;
// END WF_METHODS

type Entry = (typeof LIST)[number];
// Compile-time: every entry is a well-formed WfMethod naming a WorkflowApi member ...
const _typed: readonly WfMethod[] = LIST;
// ... and every WorkflowApi member has an entry.
type Missing = Exclude<keyof WorkflowApi, Entry['name']>;
const _complete: [Missing] extends [never] ? true : Missing = true;
void _typed;
void _complete;

/** A `wf` member name. */
export type WfMethodName = Entry['name'];

/** Every `wf` member, once, with its kind. */
export const WF_METHODS: readonly WfMethod[] = Object.freeze(
  LIST.map((m): WfMethod => Object.freeze({ ...m })),
);

/** The members that cross to the host: the sandbox capabilities a dispatcher must provide. */
export const WF_HOST_CALLS: readonly (keyof WorkflowApi)[] = Object.freeze(
  WF_METHODS.filter((m) => m.hostCall).map((m) => m.name),
);
