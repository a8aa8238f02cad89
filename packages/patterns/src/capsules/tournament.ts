// tournament: contestants with different stances, every pair judged head to head.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const tournament: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'tournament',
    description:
      'Contestants with different stances (conservative, inventive, risk-first on the deep tier, pragmatic) answer the same request; every pair is judged head to head and the standings pick the winner.',
    phases: ['compete', 'judge'],
    readOnly: true,
    plannedAgents: 6,
    maxAgents: 10,
    maxConcurrency: 3,
    patterns: ['tournament'],
    inputSchema: {
      type: 'object',
      properties: {
        request: { type: 'string' },
        contestants: { type: 'integer' },
        criteria: { type: 'array', items: { type: 'string' } },
      },
      required: ['request'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'selection',
    patterns: ['tournament'],
    reusableFor: ['choosing between approaches', 'answers where the stance matters'],
    notFor: ['collecting many small ideas (use generate-and-filter)'],
  },
  inputs: {
    description:
      'request: the question; contestants: 2-4 (default 3: conservative, inventive, risk-first); criteria: what the judges weigh.',
    examples: [
      { request: 'How should we roll out the new storage engine?' },
      { request: 'Propose the API for the retry helper', contestants: 4, criteria: ['simplicity'] },
    ],
  },
});
