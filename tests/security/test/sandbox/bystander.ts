// Shared bystander harness: an innocent workload (sequential host calls with real waits) whose
// solo latency is measured in the same test, then compared while a hostile run shares the sandbox.
import type { Sandbox, SandboxOutcome } from '@wf/sandbox';

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

/**
 * Median latency of the innocent workload undisturbed: the same number of innocent runs at once
 * as in the bystander test, without the hostile one, measured now (same machine load).
 */
export async function soloLatency(sb: Sandbox, n = 4, rounds = 2): Promise<number> {
  const ts: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const t = performance.now();
        await innocent(sb, 90 + i);
        ts.push(performance.now() - t);
      }),
    );
  }
  return median(ts);
}

/** 3x the solo latency, with a floor so that a tiny solo time on an idle machine cannot flake. */
export const bystanderBound = (solo: number): number => 3 * Math.max(solo, 300);

/**
 * Starts `hostile` next to `n` innocent runs (staggered so some share the hostile's worker) and
 * returns the hostile outcome, the innocent outcomes and their latencies.
 */
export async function withBystanders(
  sb: Sandbox,
  hostile: () => Promise<SandboxOutcome>,
  n = 4,
): Promise<{ hostile: SandboxOutcome; innocents: SandboxOutcome[]; latencies: number[] }> {
  const timed = async (id: number) => {
    const t = performance.now();
    const o = await innocent(sb, id);
    return { o, ms: performance.now() - t };
  };
  const innocentPromises = Array.from({ length: n }, (_, i) => timed(i));
  const h = hostile();
  const done = await Promise.all(innocentPromises);
  return {
    hostile: await h,
    innocents: done.map((d) => d.o),
    latencies: done.map((d) => d.ms),
  };
}

/** Prints the measured ratios when WF_BYSTANDER_LOG is set (for closing notes; silent in CI). */
export function logRatios(label: string, solo: number, latencies: number[]): void {
  if (process.env.WF_BYSTANDER_LOG === undefined) return;
  const worst = Math.max(...latencies);
  console.log(
    `[bystander] ${label}: solo ${solo.toFixed(0)} ms, worst ${worst.toFixed(0)} ms, ratio ${(worst / solo).toFixed(2)}x`,
  );
}
