// generate-and-filter: many ideas from different lenses, de-duplicated and ranked, best developed.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const generateAndFilter: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'generate-and-filter',
    description:
      'Several generators propose ideas from different lenses, a deep filter removes duplicates and ranks them, then a synthesis develops the strongest.',
    phases: ['generate', 'filter', 'synthesize'],
    readOnly: true,
    plannedAgents: 6,
    maxAgents: 7,
    maxConcurrency: 4,
    patterns: ['generate-and-filter'],
    inputSchema: {
      type: 'object',
      properties: {
        request: { type: 'string' },
        generators: { type: 'integer' },
        ideasPerGenerator: { type: 'integer' },
        keep: { type: 'integer' },
        criteria: { type: 'array', items: { type: 'string' } },
      },
      required: ['request'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'ideation',
    patterns: ['generate-and-filter'],
    reusableFor: ['naming', 'design options', 'test ideas', 'ways to fix a problem'],
    notFor: ['questions with one right answer (use adversarial-verification)'],
  },
  inputs: {
    description:
      'request: what to generate ideas for; generators: 1-5 (default 4); ideasPerGenerator: 1-8 (default 3); keep: how many of the best to develop, 1-10 (default 3); criteria: how ideas are judged.',
    examples: [
      { request: 'Ways to cut our CI time in half' },
      {
        request: 'Names for the new workflow command',
        generators: 3,
        keep: 5,
        criteria: ['short', 'unambiguous'],
      },
    ],
  },
});
