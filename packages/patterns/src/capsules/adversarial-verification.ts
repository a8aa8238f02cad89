// adversarial-verification: answer, try to falsify the answer, correct it.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const adversarialVerification: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'adversarial-verification',
    description:
      'A deep candidate answer, a verifier that tries to falsify it, then a corrected answer with caveats.',
    phases: ['candidate', 'verify', 'synthesize'],
    readOnly: true,
    plannedAgents: 3,
    maxAgents: 3,
    maxConcurrency: 1,
    patterns: ['adversarial-verification'],
    inputSchema: {
      type: 'object',
      properties: {
        request: { type: 'string' },
        criteria: { type: 'array', items: { type: 'string' } },
      },
      required: ['request'],
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'verification',
    patterns: ['adversarial-verification'],
    reusableFor: [
      'answers that must be right',
      'claims about code behaviour',
      'root-cause analyses',
    ],
    notFor: ['brainstorming (use generate-and-filter)'],
  },
  inputs: {
    description: 'request: the question; criteria: what a correct answer must satisfy (optional).',
    examples: [
      { request: 'Is the session cache in src/cache.ts safe under concurrent writers?' },
      {
        request: 'What is the worst-case complexity of the merge step?',
        criteria: ['cite the code path', 'give the input that triggers the worst case'],
      },
    ],
  },
});
