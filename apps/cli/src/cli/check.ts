// `wf check <file...>`: runs the static source contract over workflow sources (.js, .mjs, .cjs)
// and capsules (.json: the `source` field, plus full capsule validation, see check-capsule.ts),
// and with --smoke one run on instant simulated agents. Prints compiler-style findings, or one
// JSON document with --json. Exit codes: 0 clean or warnings only, 1 contract, capsule or smoke
// errors, 2 usage or I/O errors (a file missing, unreadable, not JSON). File names, findings and
// smoke-run errors (guest text) reach the terminal only through terminalText (invariant 13).
import { extname, resolve } from 'node:path';
import { terminalText } from '@wf/bridge/terminal-text';
import type { CheckProfile, Diagnostic } from '@wf/source-contract';
import { parseJson } from './args.js';
import type { CapsuleIssue, SmokeReport } from './check-capsule.js';
import { CliError, EXIT } from './errors.js';
import { readInputText } from './input-file.js';
import { STDERR, STDOUT } from './std-output.js';

/** Larger files are refused before reading; the contract's own cap (512 KiB) is far below. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const SOURCE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

export interface FileProblem {
  /** WF_CLI_USAGE: the file cannot be read; WF_CLI_WORKFLOW_INVALID: not a usable capsule. */
  code: 'WF_CLI_USAGE' | 'WF_CLI_WORKFLOW_INVALID';
  message: string;
}

export interface FileReport {
  file: string;
  kind: 'source' | 'capsule';
  ok: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** Present when the file could not be checked at all (exit code 2). */
  problem?: FileProblem;
  /** Capsule validation: schema issues, examples or --args failing the input schema. */
  capsuleIssues?: CapsuleIssue[];
  /** With --smoke, for files that passed every static check. */
  smoke?: SmokeReport;
}

export interface CheckReport {
  files: FileReport[];
  ok: boolean;
  exitCode: typeof EXIT.ok | typeof EXIT.failed | typeof EXIT.usage;
}

async function readWorkflowFile(
  file: string,
  cwd: string,
): Promise<
  | { kind: FileReport['kind']; source: string; json?: unknown }
  | { kind: FileReport['kind']; problem: FileProblem }
> {
  const ext = extname(file).toLowerCase();
  const kind: FileReport['kind'] = ext === '.json' ? 'capsule' : 'source';
  if (ext !== '.json' && !SOURCE_EXTENSIONS.has(ext)) {
    return {
      kind,
      problem: {
        code: 'WF_CLI_USAGE',
        message: `${file}: not a workflow file (expected .js source or .workflow.json capsule)`,
      },
    };
  }
  const read = await readInputText(resolve(cwd, file), file, MAX_FILE_BYTES);
  if (!read.ok) {
    const message =
      read.reason === 'too-large'
        ? `${file}: larger than the 16 MiB a workflow file may be`
        : read.reason === 'kind' && /is a directory/.test(read.message)
          ? `${file}: is a directory, not a workflow file`
          : read.message;
    return { kind, problem: { code: 'WF_CLI_USAGE', message } };
  }
  const text = read.text;
  if (kind === 'source') return { kind, source: text };
  let capsule: unknown;
  try {
    capsule = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return {
      kind,
      problem: { code: 'WF_CLI_WORKFLOW_INVALID', message: `${file}: not valid JSON (${detail})` },
    };
  }
  const source =
    typeof capsule === 'object' && capsule !== null && !Array.isArray(capsule)
      ? (capsule as { source?: unknown }).source
      : undefined;
  if (typeof source !== 'string') {
    return {
      kind,
      problem: {
        code: 'WF_CLI_WORKFLOW_INVALID',
        message: `${file}: a capsule needs a string "source" field with the workflow program`,
      },
    };
  }
  return { kind, source, json: capsule };
}

export async function checkFiles(
  files: readonly string[],
  options: { profile: CheckProfile; cwd: string; smoke?: boolean; args?: unknown },
): Promise<CheckReport> {
  // Loaded here, not at the top: registering `check` must not cost every verb the parser. The
  // capsule checks (the capsule schemas: dist/cli/workflows.cjs in the bundle) only for a
  // capsule or a smoke run.
  const { checkWorkflowSource } = await import('@wf/source-contract');
  let capsuleChecks: Promise<typeof import('./check-capsule.js')> | undefined;
  const capsuleModule = () => {
    capsuleChecks ??= import('./check-capsule.js');
    return capsuleChecks;
  };
  const reports: FileReport[] = [];
  for (const file of files) {
    const read = await readWorkflowFile(file, options.cwd);
    if ('problem' in read) {
      reports.push({
        file,
        kind: read.kind,
        ok: false,
        errors: [],
        warnings: [],
        problem: read.problem,
      });
      continue;
    }
    const result = checkWorkflowSource(read.source, { filename: file, profile: options.profile });
    const capsule =
      read.kind === 'capsule'
        ? (await capsuleModule()).checkCapsule(read.json, options.args)
        : undefined;
    const issues = capsule?.issues ?? [];
    const smoke =
      options.smoke && result.ok && issues.length === 0
        ? await (await capsuleModule()).smokeWorkflow(
            file,
            read.source,
            capsule?.capsule,
            options.args,
          )
        : undefined;
    reports.push({
      file,
      kind: read.kind,
      ok: result.ok && issues.length === 0 && smoke?.ok !== false,
      errors: result.ok ? [] : result.errors,
      warnings: result.warnings,
      ...(capsule ? { capsuleIssues: issues } : {}),
      ...(smoke ? { smoke } : {}),
    });
  }
  const exitCode = reports.some((r) => r.problem)
    ? EXIT.usage
    : reports.some((r) => !r.ok)
      ? EXIT.failed
      : EXIT.ok;
  return { files: reports, ok: exitCode === EXIT.ok, exitCode };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Human output: `file:line:col  CODE  message`, the hint indented below, then a summary. Each
 * finding is one line: every text in it passes terminalText in `line` layout.
 */
export function formatReport(report: CheckReport): string {
  const out: string[] = [];
  const t = (text: string) => terminalText(text);
  for (const f of report.files) {
    if (f.problem) continue; // printed on stderr by problemLines
    const file = t(f.file);
    // Capsule positions are inside the JSON string "source", so say so.
    const where = f.kind === 'capsule' ? `${file}#source` : file;
    const findings = [...f.errors, ...f.warnings].sort(
      (a, b) => a.line - b.line || a.column - b.column,
    );
    for (const d of findings) {
      out.push(
        `${where}:${d.line}:${d.column}  ${t(d.code)}  ${d.severity === 'warning' ? 'warning: ' : ''}${t(d.message)}`,
      );
      out.push(`    hint: ${t(d.hint)}`);
    }
    for (const i of f.capsuleIssues ?? []) {
      out.push(`${file}#${t(i.path)}  WF_CLI_WORKFLOW_INVALID  ${t(i.message)}`);
    }
    if (f.smoke?.ok) {
      out.push(
        `${file}: smoke run ${t(f.smoke.status)} (${plural(f.smoke.agentsStarted, 'simulated agent')})`,
      );
    } else if (f.smoke) {
      out.push(
        `${file}  WF_CLI_SMOKE_FAILED  smoke run ${t(f.smoke.status)}: ${t(f.smoke.problems.join('; '))}`,
      );
      out.push(
        '    hint: run it with `wf run <file> --delay-ms 0` to see its events, then `wf show`',
      );
    }
    if (findings.length === 0 && f.ok && !f.smoke) out.push(`${file}: ok`);
  }
  const errors = report.files.reduce(
    (n, f) =>
      n + f.errors.length + (f.capsuleIssues?.length ?? 0) + (f.smoke?.ok === false ? 1 : 0),
    0,
  );
  const warnings = report.files.reduce((n, f) => n + f.warnings.length, 0);
  const unreadable = report.files.filter((f) => f.problem).length;
  const failing = report.files.filter((f) => !f.ok && !f.problem).length;
  const parts = [
    plural(report.files.length, 'file'),
    plural(errors, 'error'),
    plural(warnings, 'warning'),
  ];
  const verdict =
    report.exitCode === 0
      ? 'ok'
      : report.exitCode === 1
        ? `${plural(failing, 'file')} refused`
        : `${plural(unreadable, 'file')} could not be checked`;
  out.push('', `${parts.join(', ')}: ${verdict}`);
  return `${out.join('\n')}\n`;
}

/** The `error` of a failing `check --json`: the first unreadable file, else the refusal count. */
export function checkError(report: CheckReport): { code: string; message: string } {
  const problem = report.files.find((f) => f.problem)?.problem;
  if (problem) return { code: problem.code, message: problem.message };
  const refused = report.files.filter((f) => !f.ok);
  return {
    code: refused.some((f) => f.errors.length > 0 || (f.capsuleIssues?.length ?? 0) > 0)
      ? 'WF_CLI_CHECK_FAILED'
      : 'WF_CLI_SMOKE_FAILED',
    message: `${plural(refused.length, 'file')} refused: ${refused.map((f) => f.file).join(', ')}`,
  };
}

/** One stderr line per file that could not be checked. */
export function problemLines(report: CheckReport): string {
  return report.files
    .filter((f) => f.problem)
    .map((f) => `wf check: ${f.problem?.code}: ${terminalText(f.problem?.message ?? '')}\n`)
    .join('');
}

/** One JSON document on stdout, sanitized as printJson does (context.ts). */
function writeJson(value: unknown): void {
  STDOUT.write(`${terminalText(JSON.stringify(value, null, 2), 'lines')}\n`);
}

/** `wf check <file...>` (verbs.ts declares its options and help). */
export async function checkAction(
  files: string[],
  opts: { json?: boolean; profile: string; args?: string; smoke?: boolean },
): Promise<void> {
  if (opts.profile !== 'default' && opts.profile !== 'authoring') {
    const message = `--profile must be 'default' or 'authoring', got '${opts.profile}'`;
    if (opts.json)
      writeJson({ ok: false, error: { code: 'WF_CLI_USAGE', message }, exitCode: EXIT.usage });
    else STDERR.write(`wf check: ${terminalText(message)}\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  let args: unknown;
  try {
    args = opts.args === undefined ? undefined : parseJson(opts.args, '--args');
  } catch (e) {
    if (!CliError.is(e)) throw e;
    if (opts.json)
      writeJson({ ok: false, error: { code: e.code, message: e.message }, exitCode: e.exitCode });
    else STDERR.write(`wf check: ${e.code}: ${terminalText(e.message)}\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const report = await checkFiles(files, {
    profile: opts.profile,
    cwd: process.cwd(),
    smoke: opts.smoke === true,
    ...(args === undefined ? {} : { args }),
  });
  if (opts.json) {
    const doc = {
      files: report.files.map((f) => ({
        file: f.file,
        kind: f.kind,
        ok: f.ok,
        errors: f.errors,
        warnings: f.warnings,
        ...(f.problem ? { problem: f.problem } : {}),
        ...(f.capsuleIssues ? { capsuleIssues: f.capsuleIssues } : {}),
        ...(f.smoke ? { smoke: f.smoke } : {}),
      })),
      ok: report.ok,
      // docs/cli.md: every failing --json document names its error and exit code.
      ...(report.ok ? {} : { error: checkError(report), exitCode: report.exitCode }),
    };
    writeJson(doc);
  } else {
    STDERR.write(terminalText(problemLines(report), 'lines'));
    STDOUT.write(terminalText(formatReport(report), 'lines'));
  }
  process.exitCode = report.exitCode;
}
