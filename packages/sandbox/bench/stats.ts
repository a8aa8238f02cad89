// Shared helpers for the sandbox benchmarks: percentiles and a header that records machine load.
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

export function summarize(samples: number[]): { p50: number; p90: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), n: s.length };
}

export const fmt = (n: number, digits = 2): string => n.toFixed(digits);

/** The 1-minute load average explains noisy figures on a shared machine. */
export function header(title: string): void {
  console.log(
    `\n== ${title} (load avg ${fmt(loadavg()[0] ?? 0)}, ${availableParallelism()} cores)`,
  );
}

/**
 * Before/after in one run: WF_SANDBOX_BASELINE=<another checkout>/packages/sandbox (built) names
 * the published entry of that tree (dist/internal/sandbox.bundle.js), which the benches that
 * support it run beside this tree's in the same rounds ("[before]" rows). Undefined when unset.
 */
export function baselineEntry(): string | undefined {
  const dir = process.env.WF_SANDBOX_BASELINE;
  if (dir === undefined || dir === '') return undefined;
  const file = join(resolve(dir), 'dist', 'internal', 'sandbox.bundle.js');
  if (!existsSync(file)) throw new Error(`WF_SANDBOX_BASELINE: no ${file} (build that tree first)`);
  return pathToFileURL(file).href;
}
