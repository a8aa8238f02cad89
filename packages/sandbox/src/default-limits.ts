// The sandbox's default limits (every one a positive integer; see internal/limits.ts for checks).
import type { SandboxLimits } from './types.js';

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 512 * 1024,
  cpuSliceMs: 1000,
  wallMs: 30_000,
  maxHostCalls: 100_000,
  maxOutstandingCalls: 64,
  maxArgBytes: 1024 * 1024,
  maxResultBytes: 4 * 1024 * 1024,
  maxJsonDepth: 64,
  abortGraceMs: 1000,
});
