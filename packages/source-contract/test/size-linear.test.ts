// checkWorkflowSource is size-linear (invariant 6): on a hostile shape at the default size limit
// (512 KB) its CPU time stays within 6x of what @babel/parser alone takes for the same text (the
// parse is linear and part of the check). Measured 2026-12-03: 0.8-2.4x, idle and beside three
// busy loops. With a scan of the visited nodes added per node (quadratic): 5.6-29x, red for four
// of the five shapes (the helper functions have the fewest nodes per byte).
//
// Why not the check's own time at 50 KB against 400 KB: with V8's GC the cost per byte grows with
// the heap (old-space promotion, marking a larger AST), so that ratio read 12-63x for 8x the text
// on an idle machine, and 68x failed CI once. The parser shares those effects at the same size.
import { describe, expect, it } from 'vitest';
import { parse } from '@babel/parser';
import { checkWorkflowSource, DEFAULT_MAX_BYTES } from '../src/index.js';

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

/** CPU milliseconds `f` takes (process-wide: GC helper threads count, hence the best-of below). */
function cpuMs(f: () => void): number {
  const t0 = process.cpuUsage();
  f();
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / 1000;
}

// At the default limit: the largest source a host checks unless it raises `maxBytes`.
const check = (source: string) => () => {
  const r = checkWorkflowSource(source);
  expect(r.ok, JSON.stringify(!r.ok && r.errors[0])).toBe(true);
};

// The options check.ts parses with, so the baseline does the same parse.
const parseOnly = (source: string) => () => {
  parse(source, {
    sourceType: 'script',
    strictMode: true,
    errorRecovery: false,
    attachComment: false,
    plugins: [],
  });
};

describe('checkWorkflowSource cost', () => {
  it.each(Object.keys(SHAPES))(
    'costs at most 6x the parse of the same text for %s at the size limit',
    (shape) => {
      const make = SHAPES[shape] as (chars: number) => string;
      check(make(25_000))(); // warm up the parser's and the checker's code paths
      const source = make(DEFAULT_MAX_BYTES - 4_096);
      // Interleaved best of three: noise (a GC, a busy core) only adds time, to either side.
      let checked = Number.POSITIVE_INFINITY;
      let parsed = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i += 1) {
        checked = Math.min(checked, cpuMs(check(source)));
        parsed = Math.min(parsed, cpuMs(parseOnly(source)));
      }
      expect(checked / Math.max(parsed, 1)).toBeLessThan(6);
    },
    120_000,
  );
});
