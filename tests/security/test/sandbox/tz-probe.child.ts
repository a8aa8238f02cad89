// Child process for the time-zone test: runs the clock/time-zone probes and prints their values
// as one JSON line. Started with different TZ values by determinism.integration.test.ts.
import { createSandbox } from '@wf/sandbox';
import { loadCorpus } from './corpus.js';

const probes = loadCorpus().filter(
  (p) => p.name.startsWith('clock-') || p.name === 'random-seeded' || p.name === 'date-real-ctor',
);
const sb = await createSandbox({ poolSize: 1, limits: { cpuSliceMs: 5000, wallMs: 10_000 } });
const out: Record<string, unknown> = { hostOffset: new Date(2021, 6, 1).getTimezoneOffset() };
for (const p of probes) {
  const o = await sb.run({
    source: p.source,
    capabilities: {},
    seed: 99,
    startTime: 1_000_000_000_000,
  });
  out[p.name] = o.status === 'completed' ? o.value : o.status;
}
const extra = await sb.run({
  source: `async function run() {
    return [new Date(2020, 0, 1).getTime(), Date.parse('2020-01-01 00:00'), new Date(86400000 * 180).toString(),
      new Date(0).getHours(), new Date(0).toLocaleTimeString(), new Date(2020, 5, 1).getTimezoneOffset()];
  }`,
  capabilities: {},
  seed: 99,
  startTime: 1_000_000_000_000,
});
out.extra = extra.status === 'completed' ? extra.value : extra.status;
await sb.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
