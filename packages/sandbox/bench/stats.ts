// Shared helpers for the sandbox benchmarks: percentiles and a header that records machine load.
import { availableParallelism, loadavg } from 'node:os';

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
