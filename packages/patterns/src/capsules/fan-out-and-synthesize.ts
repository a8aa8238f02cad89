// fan-out-and-synthesize: independent angles in parallel, then one merged answer.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const fanOutAndSynthesize: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'fan-out-and-synthesize',
    description:
      'Independent angles on one request (default scope, evidence, risk, recommendation; risk on the deep tier) run in parallel, then a synthesis merges them and removes duplicates.',
    phases: ['fan-out', 'synthesize'],
    readOnly: true,
    plannedAgents: 5,
    maxAgents: 6,
    maxConcurrency: 4,
    patterns: ['fan-out-and-synthesize'],
    inputSchema: {
      type: 'object',
      properties: {
        request: { type: 'string' },
        angles: { type: 'array', items: { type: 'string' } },
        deepAngles: { type: 'array', items: { type: 'string' } },
      },
      required: ['request'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'analysis',
    patterns: ['fan-out-and-synthesize'],
    reusableFor: ['decisions that need several independent views', 'scoping a piece of work'],
    notFor: ['checking one answer for errors (use adversarial-verification)'],
  },
  inputs: {
    description:
      'request: the question; angles: up to 5 angle names (default scope, evidence, risk, recommendation); deepAngles: angles run on the deep tier (default risk).',
    examples: [
      { request: 'Should we replace our hand-written SQL with an ORM?' },
      {
        request: 'Assess the plan to split the monolith',
        angles: ['cost', 'risk', 'team impact'],
        deepAngles: ['risk'],
      },
    ],
  },
});
