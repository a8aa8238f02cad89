// Shared bystander harness: an innocent workload (sequential host calls with real waits) run next
// to a hostile run and, at the same time, on a control sandbox that has no hostile run.
import type { Sandbox, SandboxOutcome } from '@wf/sandbox';
import { expect } from 'vitest';

export const INNOCENT_SOURCE = `async function run(api, args) {
  let acc = 0;
  for (let i = 0; i < args.steps; i++) acc += await api.wait(i);
  const xs = []; for (let i = 0; i < 5; i++) xs.push(Math.random());
  return { id: args.id, acc, xs, now: Date.now() };
}`;

export const innocentCaps = {
  wait: (x: unknown) => new Promise((resolve) => setTimeout(() => resolve(x), 10)),
};

export function innocent(sb: Sandbox, id: number, steps = 80): Promise<SandboxOutcome> {
  return sb.run({
    source: INNOCENT_SOURCE,
    args: { id, steps },
    capabilities: innocentCaps,
    seed: 1000 + id,
    startTime: 1_700_000_000_000,
  });
}

/** What an undisturbed innocent run returns (deterministic: seeded random, logical clock). */
export async function expectedValue(sb: Sandbox, id: number, steps = 80): Promise<string> {
  const o = await innocent(sb, id, steps);
  if (o.status !== 'completed') throw new Error(`solo innocent run failed: ${JSON.stringify(o)}`);
  return JSON.stringify(o.value);
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1] ?? 0;
};

/** One round: the hostile run, the innocents beside it, and the control innocents' latencies. */
export interface BystanderRound {
  hostile: SandboxOutcome;
  innocents: SandboxOutcome[];
  latencies: number[];
  control: SandboxOutcome[];
  controlLatencies: number[];
  /** Worst innocent latency next to the hostile run / median control latency of the same round. */
  ratio: number;
}

export interface BystanderResult {
  rounds: BystanderRound[];
  /** Median of the rounds' ratios. */
  ratio: number;
}

/** The bound on the bystander latency ratio (invariant 6: within 3x of undisturbed). */
export const BYSTANDER_RATIO = 3;

const timed = async (run: () => Promise<SandboxOutcome>) => {
  const t = performance.now();
  const o = await run();
  return { o, ms: performance.now() - t };
};

/**
 * Starts `hostile` next to `n` innocent runs on `sb` (so some share the hostile's worker) and, at
 * the same moment, `n` identical innocent runs on `control`, a sandbox with its own worker and no
 * hostile run. The control measures the undisturbed latency under the same machine load as the
 * bystanders (the hostile run's own CPU use included: that is shared capacity), so load from other
 * processes, which moves latencies by several times within a minute on a shared machine, cancels
 * out. Repeated `rounds` times; the result is the median of the rounds' ratios.
 */
export async function compareWithControl(
  sb: Sandbox,
  control: Sandbox,
  hostile: () => Promise<SandboxOutcome>,
  { n = 4, rounds = 3 }: { n?: number; rounds?: number } = {},
): Promise<BystanderResult> {
  const out: BystanderRound[] = [];
  for (let r = 0; r < rounds; r++) {
    const ids = Array.from({ length: n }, (_, i) => i);
    const ctl = ids.map((id) => timed(() => innocent(control, id)));
    const near = ids.map((id) => timed(() => innocent(sb, id)));
    const h = hostile();
    const [c, b] = await Promise.all([Promise.all(ctl), Promise.all(near)]);
    const controlLatencies = c.map((d) => d.ms);
    const latencies = b.map((d) => d.ms);
    out.push({
      hostile: await h,
      innocents: b.map((d) => d.o),
      latencies,
      control: c.map((d) => d.o),
      controlLatencies,
      ratio: Math.max(...latencies) / median(controlLatencies),
    });
  }
  return { rounds: out, ratio: median(out.map((r) => r.ratio)) };
}

/** Prints the measured ratios when WF_BYSTANDER_LOG is set (for closing notes; silent in CI). */
export function logRatios(label: string, result: BystanderResult): void {
  if (process.env.WF_BYSTANDER_LOG === undefined) return;
  const rounds = result.rounds
    .map(
      (r) =>
        `control ${median(r.controlLatencies).toFixed(0)} ms / worst ${Math.max(...r.latencies).toFixed(0)} ms = ${r.ratio.toFixed(2)}x`,
    )
    .join('; ');
  console.log(`[bystander] ${label}: median ratio ${result.ratio.toFixed(2)}x (${rounds})`);
}

/**
 * Every innocent run, beside the hostile one and on the control, kept its exact undisturbed
 * result, and the median latency ratio stays within BYSTANDER_RATIO.
 */
export function expectUndisturbed(result: BystanderResult, expected: string[]): void {
  for (const round of result.rounds) {
    for (const [id, o] of [...round.innocents.entries(), ...round.control.entries()]) {
      expect(o.status, JSON.stringify(o)).toBe('completed');
      expect(o.status === 'completed' && JSON.stringify(o.value)).toBe(expected[id]);
    }
  }
  expect(
    result.ratio,
    `bystander/control latency ratios ${result.rounds.map((r) => r.ratio.toFixed(2)).join(', ')}`,
  ).toBeLessThanOrEqual(BYSTANDER_RATIO);
}
