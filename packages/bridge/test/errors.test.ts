// The bridge's error class: stable codes, realm-independent identity, issue lists kept whole.
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  BRIDGE_ERROR_CODES,
  BridgeError,
  bridgeErrorFromIssues,
  parseManifest,
} from '../src/index.js';

describe('BridgeError', () => {
  it('carries code, cause and issues', () => {
    const cause = new Error('root');
    const error = new BridgeError(BRIDGE_ERROR_CODES.WF_BRIDGE_CALL_INVALID, 'bad call', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('BridgeError');
    expect(error.code).toBe('WF_BRIDGE_CALL_INVALID');
    expect(error.cause).toBe(cause);
    expect(error.issues).toEqual([]);
  });

  it('is recognised by brand, also for an object from another realm', () => {
    expect(BridgeError.is(new BridgeError(BRIDGE_ERROR_CODES.WF_BRIDGE_ARGS_INVALID, 'x'))).toBe(
      true,
    );
    expect(BridgeError.is(new Error('x'))).toBe(false);
    expect(BridgeError.is(null)).toBe(false);
    const foreign = runInNewContext(
      `const e = new Error('x'); e[Symbol.for('@wf/errors.brand')] = '@wf/bridge'; e`,
    );
    expect(foreign instanceof Error).toBe(false);
    expect(BridgeError.is(foreign)).toBe(true);
  });

  it('every code is WF_BRIDGE_* and documented', async () => {
    const { existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    for (const code of Object.values(BRIDGE_ERROR_CODES)) {
      expect(code).toMatch(/^WF_BRIDGE_[A-Z_]+$/);
      expect(
        existsSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'errors', `${code}.md`)),
      ).toBe(true);
    }
  });
});

describe('bridgeErrorFromIssues', () => {
  it('names the first issues in the message and keeps them all', () => {
    const result = parseManifest({
      name: 'X',
      phases: [],
      readOnly: 1,
      maxAgents: 0,
      maxConcurrency: 1,
      patterns: [],
    });
    if (result.ok) throw new Error('expected issues');
    const error = bridgeErrorFromIssues(
      BRIDGE_ERROR_CODES.WF_BRIDGE_MANIFEST_INVALID,
      'manifest',
      result.issues,
    );
    expect(error.code).toBe('WF_BRIDGE_MANIFEST_INVALID');
    expect(error.issues).toEqual(result.issues);
    expect(error.message).toBe(
      `invalid manifest: ${result.issues
        .slice(0, 3)
        .map((i) => i.message)
        .join('; ')} (and ${result.issues.length - 3} more)`,
    );
    expect(error.message).toContain('manifest.name must be kebab-case');
  });

  it('reads well with one issue or none', () => {
    const one = bridgeErrorFromIssues(BRIDGE_ERROR_CODES.WF_BRIDGE_ARGS_INVALID, 'args', [
      { path: 'args.request', message: 'args.request is required' },
    ]);
    expect(one.message).toBe('invalid args: args.request is required');
    expect(
      bridgeErrorFromIssues(BRIDGE_ERROR_CODES.WF_BRIDGE_ARGS_INVALID, 'args', []).message,
    ).toBe('invalid args: no details');
  });
});
