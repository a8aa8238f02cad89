// loop-until-done: rounds until nothing new turns up, then a convergence synthesis.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const loopUntilDone: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'loop-until-done',
    description:
      'Rounds of investigation, each told what earlier rounds found, until a round reports no new findings (or a round fails, or the round cap), then a convergence synthesis.',
    phases: ['iterate', 'synthesize'],
    readOnly: true,
    plannedAgents: 5,
    maxAgents: 6,
    maxConcurrency: 1,
    patterns: ['loop-until-done'],
    inputSchema: {
      type: 'object',
      properties: { request: { type: 'string' }, maxRounds: { type: 'integer' } },
      required: ['request'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'exhaustive-search',
    patterns: ['loop-until-done'],
    reusableFor: ['finding all instances of a problem', 'audits that must not stop early'],
    notFor: ['questions one agent can answer'],
  },
  inputs: {
    description: 'request: what to look for; maxRounds: 1-5 (default 4).',
    examples: [
      { request: 'Find every place that reads process.env directly' },
      { request: 'List the error paths that lose the original cause', maxRounds: 5 },
    ],
  },
});
