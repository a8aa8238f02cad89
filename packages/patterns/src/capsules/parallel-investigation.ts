// parallel-investigation (built-in): read-only angles with structured findings, then synthesis.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const parallelInvestigation: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'parallel-investigation',
    description:
      'Read-only investigators take one angle each on a question (default: structure, edge cases, tests) and return structured findings; a synthesis answers from them.',
    phases: ['investigate', 'synthesize'],
    readOnly: true,
    plannedAgents: 4,
    maxAgents: 8,
    maxConcurrency: 4,
    patterns: ['fan-out-and-synthesize'],
    inputSchema: {
      type: 'object',
      properties: {
        question: { type: 'string' },
        targets: { type: 'array', items: { type: 'string' } },
        rubric: { type: 'string' },
        maxAgents: { type: 'integer' },
        maxConcurrency: { type: 'integer' },
      },
      required: ['question'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'investigation',
    patterns: ['fan-out-and-synthesize'],
    reusableFor: ['"investigate this from three angles"', 'understanding unfamiliar code'],
    notFor: ['reviewing a diff (use scoped-review)'],
  },
  inputs: {
    description:
      'question: what to investigate; targets: the angles (default three); rubric: how to synthesize; maxAgents: 2-8 including the synthesis; maxConcurrency: 1-4.',
    examples: [
      { question: 'How does the engine enforce maxConcurrency across nested workflows?' },
      {
        question: 'Why is startup slow?',
        targets: ['module loading', 'config parsing', 'network calls at boot'],
        maxConcurrency: 2,
      },
    ],
  },
});
