// Cost of the bridge's checks, against the JSON round trip every crossing already pays (the
// sandbox moves each call as JSON text), measured side by side in this run. Prints medians
// (µs/op) and ratios. The engine calls validateCall once per host call and validateArgs once per run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calibration, ratio } from '@wf/bench';
import { parseCapsule, type TaskInput, validateArgs, validateCall } from '@wf/bridge';

const cal = await calibration();

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const BATCH = Number(process.env.BENCH_BATCH ?? 2000);

const fixture = readFileSync(
  join(import.meta.dirname, '..', 'test', 'fixtures', 'review-verify-synthesize.workflow.json'),
  'utf8',
);
const capsuleJson = JSON.parse(fixture);
const parsed = parseCapsule(capsuleJson);
if (!parsed.ok) throw new Error('fixture capsule does not parse');
const manifest = parsed.capsule.manifest;

const task: TaskInput = {
  name: 'reviewer-3',
  prompt: `Review this change.\nScope: packages/parser\n${'context line\n'.repeat(40)}`,
  phase: 'review',
  scopeSummary: 'packages/parser',
  constraints: ['cite a file and line for every finding', 'no speculation'],
  readOnly: true,
  modelHint: 'deep',
  maxTokens: 64_000,
  evidenceRefs: ['file:packages/parser/src/index.ts', 'diff:HEAD~1'],
  outputSchema: {
    type: 'object',
    properties: {
      findings: {
        type: 'array',
        items: { type: 'object', properties: { title: { type: 'string' } } },
      },
    },
    required: ['findings'],
  },
};
const args = {
  request: 'Review this change',
  scopes: ['implementation', 'tests', 'docs', 'packaging'],
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** µs per op of `fn`, median over rounds of BATCH calls. */
function measure(fn: () => unknown): number {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t0 = performance.now();
    for (let i = 0; i < BATCH; i++) fn();
    const us = ((performance.now() - t0) * 1000) / BATCH;
    if (r > 0) rounds.push(us); // round 0 warms up
  }
  return median(rounds);
}

function row(label: string, subject: () => unknown, baseline: () => unknown): number {
  // Interleave so both see the same machine state.
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 3; i++) {
    b.push(measure(baseline));
    a.push(measure(subject));
  }
  const us = median(a);
  const base = median(b);
  console.log(
    `${label.padEnd(34)} ${us.toFixed(2).padStart(8)} µs/op   baseline ${base.toFixed(2).padStart(7)} µs/op   ratio ${(us / base).toFixed(2)}x`,
  );
  return us;
}

const roundTrip = (value: unknown) => () => JSON.parse(JSON.stringify(value));

console.log(
  `bridge validation (median of ${ROUNDS} rounds x ${BATCH}; baseline: JSON stringify+parse of the same value)`,
);
const perCall = row(
  'validateCall runAgent (full task)',
  () => validateCall('runAgent', task),
  roundTrip(task),
);
console.log(
  `validateCall runAgent against the host-call floor: ${ratio(perCall, cal.pingPongUs)} a worker ping-pong`,
);
row(
  'validateCall wait',
  () => validateCall('wait', { taskId: 'task-7', timeoutMs: 60_000 }),
  roundTrip({ taskId: 'task-7', timeoutMs: 60_000 }),
);
row('validateArgs (object schema)', () => validateArgs(manifest, args), roundTrip(args));
row(
  'parseCapsule (review fixture)',
  () => parseCapsule(capsuleJson),
  () => JSON.parse(fixture),
);
