// Loads the hostile program corpus (fixtures/sandbox/*.js): each program declares in its header
// what it attacks, which outcome statuses contain it, and optional limits, capabilities and a
// pattern its completed value must match.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Capability, SandboxLimits, SandboxOutcome } from '@wf/sandbox';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/sandbox/', import.meta.url));

export interface HostileProgram {
  name: string;
  attack: string;
  expect: SandboxOutcome['status'][];
  limits: Partial<SandboxLimits>;
  caps: string[];
  value: RegExp | undefined;
  source: string;
}

const header = (source: string, key: string): string | undefined => {
  const m = new RegExp(`^// ${key}: (.*)$`, 'm').exec(source);
  return m?.[1]?.trim();
};

export function loadCorpus(): HostileProgram[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((file) => {
      const source = readFileSync(join(FIXTURES, file), 'utf8');
      const expect = header(source, 'expect');
      const attack = header(source, 'attack');
      if (expect === undefined || attack === undefined)
        throw new Error(`${file}: missing attack/expect header`);
      const limits = header(source, 'limits');
      const caps = header(source, 'caps');
      const value = header(source, 'value');
      return {
        name: file.replace(/\.js$/, ''),
        attack,
        expect: expect.split(',').map((s) => s.trim()) as SandboxOutcome['status'][],
        limits: limits === undefined ? {} : (JSON.parse(limits) as Partial<SandboxLimits>),
        caps: caps === undefined ? [] : caps.split(',').map((s) => s.trim()),
        value: value === undefined ? undefined : new RegExp(value),
        source,
      };
    });
}

/**
 * Small limits so the whole corpus stays fast on two busy cores. Hostile code is stopped by CPU
 * limits (CPU time of its own thread, so machine load cannot trip them); the wall clock is only
 * a backstop, except for programs that wait on purpose (a never-settling call), which set their
 * own `wallMs`. A 1,500 ms wall limit here failed `calls-flood-sequential` (1,000 host-call round
 * trips) and `stack-array-tostring` with two busy processes beside the suite.
 */
export const CORPUS_LIMITS: Partial<SandboxLimits> = {
  wallMs: 20_000,
  cpuMs: 1500,
  cpuSliceMs: 400,
  memoryBytes: 32 * 1024 * 1024,
  abortGraceMs: 300,
  maxHostCalls: 1000,
  maxOutstandingCalls: 32,
  maxArgBytes: 64 * 1024,
  maxResultBytes: 256 * 1024,
  maxJsonDepth: 64,
};

export function corpusCapabilities(names: string[]): Record<string, Capability> {
  const all: Record<string, Capability> = {
    echo: (x) => x,
    slow: (x) => new Promise((resolve) => setTimeout(() => resolve(x), 40)),
    never: (_x, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener('abort', () => resolve(null));
      }),
    hostError: () => {
      const e = new Error(
        `EACCES: permission denied, open '/home/ci/.config/secret.json' (${process.version})\n    at open (node:fs:1:1)\n    at /work/main/x.js:2:3`,
      );
      throw Object.assign(e, { code: 'WF_TEST_FAILURE' });
    },
  };
  const out: Record<string, Capability> = {};
  for (const n of names) {
    const c = all[n];
    if (c === undefined) throw new Error(`unknown corpus capability ${n}`);
    out[n] = c;
  }
  return out;
}

/** Host detail that must never appear in any outcome message or value. */
export function hostLeaks(text: string): string[] {
  const probes = [
    process.version,
    process.versions.node,
    process.cwd(),
    FIXTURES,
    '/home/',
    'node:',
    'file://',
    'Node.js',
    'node_modules',
  ];
  return probes.filter((p) => p.length > 0 && text.includes(p));
}
