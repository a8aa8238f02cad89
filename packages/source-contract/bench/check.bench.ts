// Throughput of checkWorkflowSource over the realistic corpus (test/fixtures/good + the bundled
// example), side by side with the regex policy earlier implementations used (prior-art.md 2.6:
// strings, templates and comments blanked, then banned-token regexes), and that policy plus the
// node:vm compile check it ran after. Prints medians of several rounds and the ratios.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { parse } from '@babel/parser';
import { calibration, ratio as floorRatio } from '@wf/bench';
import { checkWorkflowSource } from '@wf/source-contract';

const cal = await calibration();

const here = dirname(fileURLToPath(import.meta.url));
const goodDir = join(here, '../test/fixtures/good');
const corpus = [
  ...readdirSync(goodDir)
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((f) => readFileSync(join(goodDir, f), 'utf8')),
  readFileSync(join(here, '../../../examples/good.workflow.js'), 'utf8'),
];
const corpusBytes = corpus.reduce((n, s) => n + Buffer.byteLength(s), 0);

// Strings, templates (whole, substitutions included) and comments, as such policies matched them.
const BLANKABLE =
  /\/\/[^\n]*|\/\*[\s\S]*?\*\/|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\[\s\S]|[^`\\])*`/g;

/** Replaces strings, templates and comments with one space each. */
function blank(source: string): string {
  return source.replace(BLANKABLE, ' ');
}

const BANNED: RegExp[] = [
  /\bimport\b/,
  /\brequire\s*\(/,
  /\bprocess\s*[.[]/,
  /\b(?:node:)?fs\b/,
  /\bchild_process\b/,
  /\b(?:exec|execFile|spawn)\s*\(/,
  /\b(?:fetch|WebSocket|XMLHttpRequest)\b/,
  /\b(?:Deno|Bun)\b/,
  /\b(?:setTimeout|setInterval|setImmediate|queueMicrotask)\b/,
  /\bglobalThis\s*\[/,
  /__dsh/,
  /\beval\s*\(/,
  /\bFunction\s*\(/,
  /\.constructor\b/,
  /__proto__/,
];
const RAW_BANNED = /\[\s*['"]constructor['"]\s*\]/;
const CONTRACT = /^\s*async\s+function\s+run\s*\(\s*\w*\s*(?:,\s*\w+\s*)?\)/m;

function regexPolicy(source: string): boolean {
  if (!CONTRACT.test(source) || RAW_BANNED.test(source)) return false;
  const code = blank(source);
  for (const re of BANNED) if (re.test(code)) return false;
  return true;
}

function regexPolicyWithCompile(source: string): boolean {
  if (!regexPolicy(source)) return false;
  try {
    new Script(`(async () => {\n${source}\n})`);
    return true;
  } catch {
    return false;
  }
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

type Policy = (source: string) => boolean;

/**
 * MB/s (10^6 bytes) of each policy over the corpus, by CPU time of this process (robust on a
 * shared machine) and by wall time. Rounds interleave the policies so that each sees the same
 * load; each round covers >= 1 MB per policy; round 0 warms up and is dropped.
 */
function measureAll(
  policies: Record<string, Policy>,
  rounds: number,
): Record<string, { cpu: number; wall: number }> {
  const repeat = Math.max(1, Math.ceil(1_000_000 / corpusBytes));
  const bytes = corpusBytes * repeat;
  const cpu: Record<string, number[]> = {};
  const wall: Record<string, number[]> = {};
  for (let r = 0; r <= rounds; r++) {
    for (const [name, fn] of Object.entries(policies)) {
      let accepted = 0;
      const cpu0 = process.cpuUsage();
      const wall0 = process.hrtime.bigint();
      for (let k = 0; k < repeat; k++) for (const s of corpus) if (fn(s)) accepted++;
      const wallSeconds = Number(process.hrtime.bigint() - wall0) / 1e9;
      const used = process.cpuUsage(cpu0);
      const cpuSeconds = (used.user + used.system) / 1e6;
      if (accepted === 0)
        throw new Error(`${name} accepted nothing: the corpus or the policy is wrong`);
      if (r === 0) continue;
      cpu[name] ??= [];
      wall[name] ??= [];
      cpu[name].push(bytes / cpuSeconds / 1e6);
      wall[name].push(bytes / wallSeconds / 1e6);
    }
  }
  return Object.fromEntries(
    Object.keys(policies).map((name) => [
      name,
      { cpu: median(cpu[name] ?? [0]), wall: median(wall[name] ?? [0]) },
    ]),
  );
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 9);
let baselineFalsePositives = 0;
for (const s of corpus) {
  const result = checkWorkflowSource(s);
  if (!result.ok) throw new Error(`corpus file refused: ${JSON.stringify(result.errors[0])}`);
  // Legitimate workflows the regex policy refuses (regex literals and destructured parameters
  // confuse its blanking and its contract regex): reported, since they are its known weakness.
  if (!regexPolicy(s)) baselineFalsePositives++;
}
const rates = measureAll(
  {
    checker: (s) => checkWorkflowSource(s).ok,
    regex: regexPolicy,
    regexVm: regexPolicyWithCompile,
    // Reference: the parse alone, to show what the contract adds on top of @babel/parser.
    parseOnly: (s) =>
      parse(s, { sourceType: 'script', strictMode: true, attachComment: false }).program.body
        .length > 0,
  },
  rounds,
);
const zero = { cpu: 0, wall: 0 };
const checker = rates.checker ?? zero;
const regex = rates.regex ?? zero;
const regexVm = rates.regexVm ?? zero;
const parseOnly = rates.parseOnly ?? zero;
const fmt = (r: { cpu: number; wall: number }) =>
  `${r.cpu.toFixed(1).padStart(6)} MB/s   (wall ${r.wall.toFixed(1)} MB/s)`;
const ratio = (a: { cpu: number; wall: number }, b: { cpu: number; wall: number }) =>
  `${(a.cpu / b.cpu).toFixed(2).padStart(6)}x      (wall ${(a.wall / b.wall).toFixed(2)}x)`;

const row = (label: string, value: string) => console.log(`  ${label.padEnd(48)}${value}`);
console.log(
  `@wf/source-contract check throughput: ${corpus.length} realistic workflows, ${(corpusBytes / 1024).toFixed(1)} KiB,`,
);
console.log(
  `median of ${rounds} interleaved rounds, MB per CPU-second of this process (wall time in brackets)`,
);
row('checkWorkflowSource (AST, scopes, lints)', fmt(checker));
row('baseline: regex policy (blanked source)', fmt(regex));
row('baseline: regex policy + node:vm compile', fmt(regexVm));
row('reference: @babel/parser parse only', fmt(parseOnly));
row('ratio checker / regex policy', ratio(checker, regex));
row('ratio checker / regex policy + vm compile', ratio(checker, regexVm));
row('ratio checker / parse only', ratio(checker, parseOnly));
row(
  'regex policy refusals of legitimate workflows',
  `${baselineFalsePositives} of ${corpus.length}`,
);
row('target >= 10 MB/s (CPU time)', checker.cpu >= 10 ? 'met' : 'NOT met');
// One average workflow checked, against what running it costs at the floor (bare QuickJS).
const msPerWorkflow = (corpusBytes / corpus.length / (checker.cpu * 1e6)) * 1000;
row(
  'one average workflow checked',
  `${msPerWorkflow.toFixed(3)} ms CPU (${floorRatio(msPerWorkflow, cal.quickjsEvalMs)} a bare QuickJS trivial run)`,
);
