// checkWorkflowSource is size-linear (issue 11): its CPU time for 400 KB of a hostile shape stays
// within a generous multiple of 8x its time for 50 KB (a quadratic path would be ~64x). CPU time,
// not wall time, so load on the machine does not change the ratio much.
import { describe, expect, it } from 'vitest';
import { checkWorkflowSource } from '../src/index.js';

const wrap = (body: string, helpers = '') =>
  `${helpers}\nasync function run(wf, args) {\n${body}\nreturn 1;\n}\n`;

/** `unit(i)` repeated (joined by `sep`) until the text reaches `chars`. */
function fill(chars: number, unit: (i: number) => string, sep = ''): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i += 1) {
    const u = unit(i);
    parts.push(u);
    length += u.length + sep.length;
  }
  return parts.join(sep);
}

const SHAPES: Record<string, (chars: number) => string> = {
  'helper functions': (n) =>
    wrap(
      '',
      fill(n, (i) => `function h${i}(a, b) { return a + b * ${i}; }\n`),
    ),
  'a member chain': (n) => wrap(`const s = args${fill(n, (i) => `.p${i % 10}`)};`),
  'computed keys from literals': (n) =>
    wrap(`const o = {};\n${fill(n, (i) => `o['a' + '${i}'] = o['b${i}'];`, '\n')}`),
  'shadowing blocks': (n) => wrap(fill(n, (i) => `{ let x${i % 50} = ${i}; }`, '\n')),
  'wf calls': (n) => wrap(fill(n, (i) => `wf.log('m${i}');`, '\n')),
};

function cpuMs(source: string): number {
  const t0 = process.cpuUsage();
  const r = checkWorkflowSource(source, { maxBytes: 2 * 1024 * 1024 });
  const used = process.cpuUsage(t0);
  expect(r.ok, JSON.stringify(!r.ok && r.errors[0])).toBe(true);
  return (used.user + used.system) / 1000;
}

describe('checkWorkflowSource cost', () => {
  it.each(Object.keys(SHAPES))(
    'is linear in the size of %s',
    (shape) => {
      const make = SHAPES[shape] as (chars: number) => string;
      cpuMs(make(25_000)); // warm up the parser's code paths
      // Best of three on both sides: noise (GC of a neighbour's heap, a busy core) only adds time.
      const best = (chars: number) => Math.min(...[0, 1, 2].map(() => cpuMs(make(chars))));
      const small = best(50_000);
      const large = best(400_000);
      // Linear is ~8x (measured alone: 6.9x for the member chain); quadratic would be ~64x. The
      // bound sits between, wide enough for a loaded CI machine (31x was seen under the full
      // suite with best-of-two), so it only ever catches a superlinear path.
      expect(large / Math.max(small, 1)).toBeLessThan(40);
    },
    60_000,
  );
});
