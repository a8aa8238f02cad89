// The authoring corpus: inline workflows written the way models write them (following the
// prompt section), each sent once through the real `run_workflow` tool (real engine, QuickJS,
// run store; only the DSH child transport is scripted). Prints the first-time pass rate.
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULTED_MANIFEST_FIELDS, PATTERN_IDS } from '@wf/bridge';
import { afterAll, describe, expect, it } from 'vitest';
import { createModelHost } from './authoring/model-host.js';

const FIXTURES = new URL('./fixtures/authoring/', import.meta.url);
const cases = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.js'))
  .sort()
  .map((f) => f.slice(0, -3));

/** Cases that failed their first attempt before the prompt named every required manifest field. */
const FAILED_BEFORE = new Set<string>([
  '02-missing-patterns',
  '03-missing-phases',
  '04-empty-phases',
  '06-use-strict',
  '07-top-level-class',
  '08-console-log',
  '09-has-own-property',
  '18-async-arrow-run',
  '26-console-error-in-catch',
  '28-extra-manifest-version',
  '29-guessed-pattern-name',
  '31-top-level-let',
  '32-minimal-manifest',
  '35-spawn-and-wait',
]);

/**
 * Cases still refused, each for a reason: the refusal must name what was wrong and the way out
 * (a model's one retry). Everything else must complete on its first attempt.
 */
const REFUSED: ReadonlyMap<string, RegExp> = new Map([
  // the contract keeps prototypes out of reach; the hint names the safe alternative
  ['09-has-own-property', /5:16 WF_SOURCE_FORBIDDEN_MEMBER .*Object\.hasOwn\(obj, key\)/],
  // manifests keep exact keys (a typo must not silently drop a limit)
  ['28-extra-manifest-version', /manifest\.version is not a known field \(allowed: name, /],
  // a pattern name outside the closed vocabulary; the message lists it
  ['29-guessed-pattern-name', /patterns\[0\] must be one of classify-and-act, .*got "map-reduce"/],
  // top-level mutable state stays refused (source-contract hostile corpus: top-level-let.js)
  ['31-top-level-let', /1:1 WF_SOURCE_SHAPE top-level `let` .*hint: use const at top level/],
]);

/**
 * Cases whose result depends on the children's structured answers (`outputSchema`): their exact
 * result is asserted, so an answer dropped or delivered as text (the workflow's fallbacks then
 * still complete) turns them red. Children answer the smallest value the schema accepts
 * (`answerFor`): the first enum member, 'ok' for strings, 1 for numbers.
 */
const STRUCTURED_RESULTS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['21-structured-output', Array(3).fill({ name: 'ok', rationale: 'ok', score: 1 })],
  ['22-classify-and-act', { category: 'ui', proposal: 'Findings for fix-ui: looks fine.' }],
]);

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-authoring-')));
const host = createModelHost(dir);
const outcomes: { name: string; ok: boolean; detail: string }[] = [];

afterAll(async () => {
  await host.unload();
  rmSync(dir, { recursive: true, force: true });
  const passed = outcomes.filter((o) => o.ok).length;
  const lines = outcomes.map(
    (o) => `  ${o.ok ? 'pass' : 'FAIL'} ${o.name}${o.ok ? '' : `: ${o.detail}`}`,
  );
  const pct = (n: number) => `${((100 * n) / Math.max(1, outcomes.length)).toFixed(1)}%`;
  const before = outcomes.filter((o) => !FAILED_BEFORE.has(o.name)).length;
  console.log(
    `authoring corpus: ${passed}/${outcomes.length} first-time passes (${pct(passed)}); before the prompt named the required fields: ${before}/${outcomes.length} (${pct(before)})\n${lines.join('\n')}`,
  );
});

describe('what the model is told', () => {
  it('the run tool lists every manifest field, none required, and the allowed pattern names', () => {
    const params = host.tools.get('run_workflow')?.parameters as {
      properties: { manifest: Record<string, unknown> };
    };
    const manifest = params.properties.manifest as {
      properties: Record<string, { enum?: unknown; items?: { enum?: unknown } }>;
      required?: unknown;
      additionalProperties: unknown;
    };
    expect(Object.keys(manifest.properties).sort()).toEqual(
      [...DEFAULTED_MANIFEST_FIELDS, 'plannedAgents', 'tokenBudget'].sort(),
    );
    expect(manifest.required).toBeUndefined();
    expect(manifest.additionalProperties).toBe(false);
    expect(manifest.properties.patterns?.items?.enum).toEqual([...PATTERN_IDS]);
  });

  it('the prompt section says every field is optional, with defaults and allowed values', () => {
    const text = host.sections.map((x) => x.text).join('\n');
    expect(text).toContain('Every manifest field is optional');
    for (const field of DEFAULTED_MANIFEST_FIELDS) expect(text).toContain(field);
    for (const id of PATTERN_IDS) expect(text).toContain(id);
    expect(text).toContain('default ["main"]');
    expect(text).toContain('console.log');
    expect(text).toContain('Object.hasOwn');
  });
});

describe('authoring corpus: inline workflows pass first time', () => {
  it('holds at least 30 workflows', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)('%s', async (name) => {
    const source = readFileSync(new URL(`${name}.js`, FIXTURES), 'utf8');
    const call = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as {
      manifest?: unknown;
      args?: unknown;
    };
    const tool = host.tools.get('run_workflow');
    if (!tool) throw new Error('run_workflow is not registered');
    let ok = false;
    let detail = '';
    let result: unknown;
    try {
      const reply = (await tool.execute(
        { source, ...call },
        { agent: host.parent, signal: new AbortController().signal },
      )) as { status: string; result?: unknown; error?: { code: string; message: string } };
      ok = reply.status === 'completed' && reply.result !== undefined;
      result = reply.result;
      detail = reply.error ? `${reply.error.code}: ${reply.error.message}` : reply.status;
    } catch (error) {
      detail = error instanceof Error ? error.message : String(error);
    }
    outcomes.push({ name, ok, detail: detail.slice(0, 300) });
    const refused = REFUSED.get(name);
    if (refused) {
      expect(ok, detail).toBe(false);
      expect(detail).toMatch(refused);
    } else expect(ok, detail).toBe(true);
    if (STRUCTURED_RESULTS.has(name)) expect(result).toEqual(STRUCTURED_RESULTS.get(name));
  });
});
