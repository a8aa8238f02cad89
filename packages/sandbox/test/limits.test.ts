import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, SandboxError } from '../src/index.js';
import { mergeLimits } from '../src/internal/limits.js';

describe('mergeLimits', () => {
  it('applies a patch over the defaults', () => {
    const l = mergeLimits(DEFAULT_LIMITS, { wallMs: 10, memoryBytes: 1024 }, 'request.limits');
    expect(l).toEqual({ ...DEFAULT_LIMITS, wallMs: 10, memoryBytes: 1024 });
  });
  it('names the bad limit and where it came from', () => {
    const bad = (patch: Record<string, unknown>) => () =>
      mergeLimits(DEFAULT_LIMITS, patch, 'request.limits');
    expect(bad({ wallMs: -1 })).toThrow(
      /request\.limits\.wallMs must be a positive integer, got -1/,
    );
    expect(bad({ wallMs: 1.5 })).toThrow(/wallMs/);
    expect(bad({ wallMs: '10' })).toThrow(/got "10"/);
    expect(bad({ nope: 1 })).toThrow(/request\.limits\.nope is not a known limit/);
    expect(bad({ stackBytes: 64 * 1024 })).toThrow(/stackBytes must be between 262144 and 1048576/);
    try {
      bad({ wallMs: 0 })();
    } catch (e) {
      expect(SandboxError.is(e)).toBe(true);
      expect((e as SandboxError).code).toBe('WF_SANDBOX_INVALID_REQUEST');
    }
    expect(() => mergeLimits(DEFAULT_LIMITS, { cpuSliceMs: 0 }, 'options.limits')).toThrow(
      expect.objectContaining({ code: 'WF_SANDBOX_INVALID_OPTIONS' }),
    );
  });
  it('keeps the defaults inside the engine-safe ranges', () => {
    expect(DEFAULT_LIMITS.stackBytes).toBeGreaterThanOrEqual(256 * 1024);
    expect(DEFAULT_LIMITS.stackBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
  });
});

describe('createSandbox options', () => {
  it('rejects a bad pool size with a clear message', async () => {
    const { createSandbox } = await import('../src/index.js');
    await expect(createSandbox({ poolSize: 0 })).rejects.toThrow(
      /options\.poolSize must be an integer from 1 to 256, got 0/,
    );
    await expect(createSandbox({ limits: { wallMs: -5 } })).rejects.toThrow(
      /options\.limits\.wallMs/,
    );
    await expect(createSandbox({ wasmTierUp: 'no' as unknown as boolean })).rejects.toThrow(
      expect.objectContaining({
        code: 'WF_SANDBOX_INVALID_OPTIONS',
        message: 'options.wasmTierUp must be a boolean, got string',
      }),
    );
  });
});
