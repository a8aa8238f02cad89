// Default limits and their validation. Every limit is a positive integer; the stack limit stays
// inside the range where QuickJS's own stack check fires before the worker's native stack runs
// out (its threads get a 64 MiB stack), so deep recursion fails cleanly inside the guest.
import { SandboxError } from '../errors.js';
import { DEFAULT_LIMITS } from '../default-limits.js';
import type { SandboxLimits } from '../types.js';

export { DEFAULT_LIMITS };

export const STACK_BYTES_RANGE = { min: 256 * 1024, max: 1024 * 1024 } as const;

const KEYS = Object.keys(DEFAULT_LIMITS) as (keyof SandboxLimits)[];

export function mergeLimits(
  base: Readonly<SandboxLimits>,
  patch: Partial<SandboxLimits> | undefined,
  where: 'options.limits' | 'request.limits',
): SandboxLimits {
  const out: SandboxLimits = { ...base };
  if (patch === undefined) return out;
  if (typeof patch !== 'object' || patch === null) {
    throw new SandboxError(invalidCode(where), `${where} must be an object`);
  }
  for (const key of Object.keys(patch)) {
    if (!KEYS.includes(key as keyof SandboxLimits)) {
      throw new SandboxError(
        invalidCode(where),
        `${where}.${key} is not a known limit (known: ${KEYS.join(', ')})`,
      );
    }
    const value = (patch as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new SandboxError(
        invalidCode(where),
        `${where}.${key} must be a positive integer, got ${describe(value)}`,
      );
    }
    out[key as keyof SandboxLimits] = value;
  }
  if (out.stackBytes < STACK_BYTES_RANGE.min || out.stackBytes > STACK_BYTES_RANGE.max) {
    throw new SandboxError(
      invalidCode(where),
      `${where}.stackBytes must be between ${STACK_BYTES_RANGE.min} and ${STACK_BYTES_RANGE.max}, got ${out.stackBytes}`,
    );
  }
  return out;
}

function invalidCode(where: string) {
  return where === 'options.limits' ? 'WF_SANDBOX_INVALID_OPTIONS' : 'WF_SANDBOX_INVALID_REQUEST';
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  return typeof value;
}
