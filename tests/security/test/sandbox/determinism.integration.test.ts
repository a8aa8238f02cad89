// Invariant 5 from the outside: the guest's clock and time zone do not depend on the host. The
// same probes run in child processes under different TZ settings and must print identical bytes,
// and repeated runs with one seed agree.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createSandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const child = fileURLToPath(new URL('./tz-probe.child.ts', import.meta.url));
const root = fileURLToPath(new URL('../../../../', import.meta.url));

async function probe(tz: string): Promise<{ line: string; parsed: Record<string, unknown> }> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--conditions=@wf/source', child],
    {
      cwd: root,
      env: { ...process.env, TZ: tz },
      timeout: 60_000,
    },
  );
  const line = stdout.trim().split('\n').pop() ?? '';
  return { line, parsed: JSON.parse(line) as Record<string, unknown> };
}

describe('determinism across host time zones', () => {
  it('prints identical guest output under TZ=UTC and TZ=America/New_York', async () => {
    const [utc, ny] = await Promise.all([probe('UTC'), probe('America/New_York')]);
    // The hosts really differ ...
    expect(utc.parsed.hostOffset).toBe(0);
    expect(ny.parsed.hostOffset).toBe(240);
    // ... and the guests do not.
    const strip = (p: Record<string, unknown>) => JSON.stringify({ ...p, hostOffset: undefined });
    expect(strip(ny.parsed)).toBe(strip(utc.parsed));
    expect(JSON.stringify(utc.parsed.extra)).toContain('GMT+0000');
    expect(utc.parsed['clock-busy-wait']).toBe(0);
  }, 90_000);

  it('gives byte-identical output across runs with the same seed, start time and host results', async () => {
    const sb = await createSandbox({ poolSize: 2 });
    try {
      const source = `async function run(api, args) {
        const xs = [];
        for (let i = 0; i < 5; i++) xs.push(Math.random());
        const a = await Promise.all([api.slow(1), api.fast(2)]);
        xs.push(Date.now(), new Date().toString(), a);
        const b = await api.fast(3);
        xs.push(Date.now(), b, Math.random(), args);
        return xs;
      }`;
      const caps = {
        slow: (x: unknown) => new Promise((r) => setTimeout(() => r(x), 30)),
        fast: (x: unknown, ctx: { setNow(n: number): void }) => {
          ctx.setNow(2_000_000_000_000 + Number(x));
          return x;
        },
      };
      const outs = await Promise.all(
        Array.from({ length: 6 }, () =>
          sb.run({
            source,
            capabilities: caps,
            args: { k: [1, 2] },
            seed: 1234,
            startTime: 1_500_000_000_000,
          }),
        ),
      );
      const texts = outs.map((o) =>
        o.status === 'completed' ? JSON.stringify(o.value) : o.status,
      );
      expect(new Set(texts).size).toBe(1);
      expect(texts[0]).toContain('2000000000003');
      const other = await sb.run({
        source,
        capabilities: caps,
        args: { k: [1, 2] },
        seed: 1235,
        startTime: 1_500_000_000_000,
      });
      expect(other.status === 'completed' && JSON.stringify(other.value)).not.toBe(texts[0]);
    } finally {
      await sb.close();
    }
  });
});
