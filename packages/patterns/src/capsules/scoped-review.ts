// scoped-review (built-in): review packets -> reviewers -> merged findings -> verifiers -> audit -> synthesis.
import type { WorkflowCapsule } from '@wf/bridge';
import { defineCapsule } from '../internal/define.js';

export const scopedReview: WorkflowCapsule = defineCapsule({
  manifest: {
    name: 'scoped-review',
    description:
      'Reviews a change given as review packets: a primary reviewer per packet (and a deep second reviewer for high-risk packets), findings merged by deterministic id with the highest severity winning, verifiers giving each finding exactly one disposition, an audit artifact, and a final synthesis.',
    phases: ['primary-review', 'verification', 'audit', 'final-synthesis'],
    readOnly: true,
    maxAgents: 64,
    maxConcurrency: 4,
    patterns: ['fan-out-and-synthesize', 'adversarial-verification'],
    inputSchema: {
      type: 'object',
      properties: {
        packets: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              diff: { type: 'string' },
              risk: { type: 'string', enum: ['normal', 'high'] },
              files: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { path: { type: 'string' } },
                  required: ['path'],
                },
              },
            },
            required: ['id', 'diff', 'files'],
          },
        },
        packetFiles: { type: 'array', items: { type: 'string' } },
        request: { type: 'string' },
        requirements: { type: 'array', items: { type: 'string' } },
        testEvidence: { type: 'string' },
        maxReviewers: { type: 'integer' },
      },
      additionalProperties: false,
    },
  },
  intent: {
    taskClass: 'code-review',
    patterns: ['fan-out-and-synthesize', 'adversarial-verification'],
    reusableFor: ['reviewing a diff, a branch or a commit', '"a thorough review"'],
    notFor: ['questions about code that is not changing (use parallel-investigation)'],
  },
  inputs: {
    description:
      'packets: review packets from buildReviewPackets(diff), or packetFiles: workspace paths of packets written by writeReviewPackets; request: what the change is for; requirements: what it must meet; testEvidence: test output supplied with it; maxReviewers: cap on reviewer agents (at most 60).',
    examples: [
      {
        request: 'Add retry with backoff to the HTTP client',
        packets: [
          {
            id: 'pkt-0123456789abcdef',
            rangeId: 'rng-0123456789abcdef',
            partition: 'src/source',
            risk: 'normal',
            files: [{ path: 'src/http.ts', change: 'modified' }],
            diff: 'diff --git a/src/http.ts b/src/http.ts\n--- a/src/http.ts\n+++ b/src/http.ts\n@@ -1 +1,2 @@\n export {};\n+export const retries = 3;\n',
          },
        ],
      },
      {
        request: 'Review the release branch',
        packetFiles: [
          '.dsh/review-packets/rng-0123456789abcdef/000-src-source-pkt-0123456789abcdef.json',
        ],
        requirements: ['no breaking API changes'],
      },
    ],
  },
});
