// classify-and-act: classify the request, route it to a matching worker, synthesize.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const classifyAndAct: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'classify-and-act',
    description:
      'A fast classifier labels the request (research, verification, migration, triage, creative); a worker routed by the label acts on it, citing the classification; then a synthesis answers.',
    phases: ['classify', 'act', 'synthesize'],
    readOnly: true,
    plannedAgents: 3,
    maxAgents: 3,
    maxConcurrency: 1,
    patterns: ['classify-and-act'],
    inputSchema: {
      type: 'object',
      properties: { request: { type: 'string' }, context: { type: 'string' } },
      required: ['request'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'routing',
    patterns: ['classify-and-act'],
    reusableFor: [
      'requests of unknown kind',
      'one-shot questions that need the right kind of worker',
    ],
    notFor: ['changes to files (read-only)', 'requests that need several independent views'],
  },
  inputs: {
    description:
      'request: what to do; context: optional background the classifier and worker should see.',
    examples: [
      { request: 'Why does the build fail on Node 22 but not on Node 20?' },
      {
        request: 'Plan moving the config loader from JSON to TOML',
        context: 'The loader lives in packages/config; three apps read it.',
      },
    ],
  },
});
