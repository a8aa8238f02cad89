// Quality lints: warnings by default, errors under the authoring profile.
import { describe, expect, it } from 'vitest';
import { checkWorkflowSource } from '../src/index.js';
import { errorCodes, inRun, warningCodes } from './helpers.js';

const LOOP = 'WF_SOURCE_LINT_UNBOUNDED_LOOP';

describe('WF_SOURCE_LINT_UNBOUNDED_LOOP', () => {
  it.each([
    ['while (true)', 'while (true) { await wf.runAgent({}); }'],
    ['for (;;)', 'for (;;) { await wf.runAgent({}); }'],
    ['for (;true;)', 'for (let i = 0; true; i++) { await wf.runAgent({}); }'],
    ['do ... while (true)', 'do { await wf.runAgent({}); } while (true);'],
    ['while (1)', 'while (1) {}'],
    ['while (!0)', 'while (!0) {}'],
    ["while ('yes')", "while ('yes') {}"],
    [
      'a break that leaves only an inner loop',
      'while (true) { for (const x of args.l) { break; } }',
    ],
    ['a break inside a switch', 'while (true) { switch (args.k) { case 1: break; } }'],
    ['a return inside a nested function', 'while (true) { args.l.map((x) => { return x; }); }'],
    [
      'a break inside a nested function loop',
      'while (true) { const f = () => { for (;;) { break; } }; f(); }',
    ],
    ['a throw caught inside the loop', 'while (true) { try { throw new Error("x"); } catch {} }'],
    ['an unlabeled continue', 'while (true) { continue; }'],
    ['continue to its own label', 'outer: while (true) { continue outer; }'],
  ])('flags %s', (_name, body) => {
    expect(warningCodes(inRun(body))).toContain(LOOP);
  });

  it.each([
    ['a break', 'while (true) { if (await wf.runAgent({})) break; }'],
    ['a return', 'for (;;) { const r = await wf.runAgent({}); if (r) return r; }'],
    ['a throw', 'while (true) { throw new Error("stop"); }'],
    ['a throw in a try without catch', 'while (true) { try { throw new Error("x"); } finally {} }'],
    ['a labeled break from an inner loop', 'outer: while (true) { for (;;) { break outer; } }'],
    ['a labeled break from a block', 'outer: { while (true) { break outer; } }'],
    [
      'continue to an outer label',
      'outer: for (const x of args.l) { while (true) { continue outer; } }',
    ],
    ['a break after a switch', 'while (true) { switch (args.k) { default: } break; }'],
    [
      'a return in a catch',
      'while (true) { try { await wf.runAgent({}); } catch (e) { return null; } }',
    ],
    ['a bounded for', 'for (let i = 0; i < 3; i++) {}'],
    ['a variable condition', 'let go = true; while (go) { go = false; }'],
    ['for-of', 'for (const x of args.list) {}'],
  ])('does not flag a loop with %s', (_name, body) => {
    expect(warningCodes(inRun(body))).not.toContain(LOOP);
  });

  it('points at the loop', () => {
    const [w] = checkWorkflowSource(inRun('while (true) {}')).warnings;
    expect(w).toMatchObject({ code: LOOP, line: 3, column: 3, severity: 'warning' });
  });
});

describe('WF_SOURCE_LINT_NO_AGENT_WORK', () => {
  it('flags a run that never calls an agent method, at the run name', () => {
    const result = checkWorkflowSource('async function run(wf, args) {\n  return args.x;\n}');
    expect(result.ok).toBe(true);
    expect(result.warnings).toMatchObject([
      { code: 'WF_SOURCE_LINT_NO_AGENT_WORK', line: 1, column: 16 },
    ]);
  });

  it.each([
    ['runAgent', 'return wf.runAgent({});'],
    ['spawnAgent', 'const h = await wf.spawnAgent({}); return wf.wait(h.taskId);'],
    ['synthesize', 'return wf.synthesize({ inputs: [], rubric: "r" });'],
    ['workflow', "return wf.workflow('review', {});"],
    ['a destructured method', 'const { runAgent } = wf; return runAgent({});'],
    ['a helper', 'return ask(wf);'],
    ['a computed literal', "return wf['runAgent']({});"],
  ])('accepts agent work through %s', (_name, body) => {
    const source = `async function run(wf, args) { ${body} }\nfunction ask(api) { return api.runAgent({}); }`;
    expect(warningCodes(source)).not.toContain('WF_SOURCE_LINT_NO_AGENT_WORK');
  });

  it('does not count wf.parallel or wf.log alone', () => {
    expect(warningCodes('async function run(wf) { wf.log("x"); return wf.parallel([]); }')).toEqual(
      ['WF_SOURCE_LINT_NO_AGENT_WORK'],
    );
  });
});

describe('WF_SOURCE_LINT_UNAWAITED_AGENT', () => {
  const U = 'WF_SOURCE_LINT_UNAWAITED_AGENT';
  it.each([
    ['a bare statement', 'wf.runAgent({});'],
    ['spawnAgent', 'wf.spawnAgent({});'],
    ['synthesize', 'wf.synthesize({});'],
    ['void', 'void wf.runAgent({});'],
    ['a sequence', 'wf.log("a"), wf.runAgent({});'],
    ['a conditional', 'args.x ? wf.runAgent({}) : null;'],
    ['a logical', 'args.x && wf.runAgent({});'],
    ['an optional call', 'wf.runAgent?.({});'],
    ['a for update', 'for (let i = 0; i < 2; i++, wf.runAgent({})) {}'],
    [
      'inside a block callback',
      'await wf.parallel(args.l.map((x) => async () => { wf.runAgent({ x }); }));',
    ],
  ])('flags %s', (_name, body) => {
    expect(warningCodes(inRun(body))).toContain(U);
  });

  it.each([
    ['awaited', 'await wf.runAgent({});'],
    ['returned', 'return wf.runAgent({});'],
    ['stored', 'const p = wf.runAgent({}); await p;'],
    ['assigned', 'let p; p = wf.runAgent({}); await p;'],
    ['collected', 'await Promise.all([wf.runAgent({}), wf.runAgent({})]);'],
    ['an arrow body', 'await wf.parallel(args.l.map((x) => () => wf.runAgent({ x })));'],
    ['chained', 'wf.runAgent({}).then((r) => wf.log(r));'],
    ['passed on', 'keep(wf.runAgent({}));'],
    ['pushed', 'const ps = []; ps.push(wf.runAgent({})); await Promise.all(ps);'],
  ])('accepts an agent call that is %s', (_name, body) => {
    expect(warningCodes(`${inRun(body)}function keep(p) { return p; }\n`)).not.toContain(U);
  });

  it('names the call in the message', () => {
    const [w] = checkWorkflowSource(inRun('wf.synthesize({});')).warnings;
    expect(w?.message).toContain('`wf.synthesize(...)`');
    expect(w?.hint).toContain('await wf.synthesize');
  });
});

describe('WF_SOURCE_LINT_UNKNOWN_WF_METHOD', () => {
  it('suggests the closest wf method', () => {
    const [w] = checkWorkflowSource(inRun('return wf.runAgnet({});')).warnings;
    expect(w).toMatchObject({ code: 'WF_SOURCE_LINT_UNKNOWN_WF_METHOD', line: 3, column: 13 });
    expect(w?.hint).toContain('wf.runAgent');
  });

  it('works with a renamed first parameter and ignores other objects', () => {
    const source =
      'async function run(api, args) { await api.runAgent({}); return [api.spawn, args.spawn]; }';
    const warnings = checkWorkflowSource(source).warnings;
    expect(warnings.map((w) => w.message)).toEqual(['`api.spawn` is not part of the workflow API']);
  });

  it('checks the keys of a destructured wf parameter', () => {
    const source = 'async function run({ runAgent, spawnAgnet }, args) { return runAgent(args); }';
    const [w] = checkWorkflowSource(source).warnings;
    expect(w).toMatchObject({ code: 'WF_SOURCE_LINT_UNKNOWN_WF_METHOD', line: 1, column: 32 });
    expect(w?.hint).toContain('spawnAgent');
  });

  it('accepts every method of the list, and a shadowing local named wf', () => {
    const body =
      'wf.phase; wf.wait; wf.snapshot; wf.output; wf.send; wf.stop; wf.parallel; wf.pipeline; wf.artifact; wf.log; wf.readFile; wf.lastFailure; wf.budget; wf.runId; wf.args; wf.spawnAgent; wf.synthesize; wf.workflow;\n  const f = (wf) => wf.other; return f;';
    expect(warningCodes(inRun(body))).toEqual([]);
  });
});

describe('profiles', () => {
  const source = inRun('while (true) {}\n  wf.runAgent({});\n  document.title;');

  it('reports lints as warnings by default (ok stays true)', () => {
    const result = checkWorkflowSource(source);
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => [w.code, w.severity])).toEqual([
      ['WF_SOURCE_LINT_UNBOUNDED_LOOP', 'warning'],
      ['WF_SOURCE_LINT_UNAWAITED_AGENT', 'warning'],
      ['WF_SOURCE_LINT_UNKNOWN_GLOBAL', 'warning'],
    ]);
  });

  it('turns every lint into an error under the authoring profile', () => {
    const result = checkWorkflowSource(source, { profile: 'authoring' });
    expect(result.ok).toBe(false);
    expect(result.warnings).toEqual([]);
    expect(errorCodes(source, { profile: 'authoring' })).toEqual([
      'WF_SOURCE_LINT_UNBOUNDED_LOOP',
      'WF_SOURCE_LINT_UNAWAITED_AGENT',
      'WF_SOURCE_LINT_UNKNOWN_GLOBAL',
    ]);
    if (!result.ok) expect(result.errors.every((e) => e.severity === 'error')).toBe(true);
  });

  it('keeps contract errors errors and lints warnings in the same result', () => {
    const result = checkWorkflowSource(inRun('while (true) {}\n  return process;'));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors.map((e) => e.code)).toEqual(['WF_SOURCE_FORBIDDEN_NAME']);
      expect(result.warnings.map((e) => e.code)).toEqual(['WF_SOURCE_LINT_UNBOUNDED_LOOP']);
    }
  });
});
