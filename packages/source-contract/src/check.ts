// checkWorkflowSource: size and depth guards, then a strict-script parse, then the AST contract.
// Never throws for any source string (hostile input gets diagnostics); throws only on bad options.
import { createRequire } from 'node:module';
import {
  SOURCE_CONTRACT_CODES as C,
  SourceContractError,
  type SourceContractCode,
} from './errors.js';
import { Analyzer, type Finding } from './internal/checker.js';
import { findExcessiveNesting, positionAt, utf8Length } from './internal/prescan.js';
import {
  type CheckOptions,
  type CheckResult,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_DEPTH,
  type Diagnostic,
} from './types.js';

// @babel/parser is CommonJS: an ESM `import` of it makes Node scan its 0.5 MB with the CJS export
// lexer before compiling it, several times what a require costs. It is loaded on
// the first check, so importing this package for its types or codes costs nothing.
type BabelParse = typeof import('@babel/parser').parse;
let babelParse: BabelParse | undefined;
function parse(...args: Parameters<BabelParse>): ReturnType<BabelParse> {
  babelParse ??= (createRequire(import.meta.url)('@babel/parser') as typeof import('@babel/parser'))
    .parse;
  return babelParse(...args);
}

interface BabelSyntaxError {
  reasonCode?: string;
  message: string;
  loc?: { line: number; column: number };
}

/** At most this many errors and this many warnings are returned (the first, by position). */
export const MAX_DIAGNOSTICS = 100;

const MODULE_REASONS = new Set(['ImportOutsideModule', 'ImportMetaOutsideModule']);
const UNSUPPORTED_REASONS = new Set([
  'MissingPlugin',
  'MissingOneOfPlugins',
  'UnexpectedUsingDeclaration',
  'UsingDeclarationHasBindingPattern',
]);

function isBabelSyntaxError(error: unknown): error is BabelSyntaxError {
  return error instanceof SyntaxError && 'loc' in error;
}

/** True for the engine's "Maximum call stack size exceeded" (V8 throws a RangeError). */
function isStackExhaustion(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function fromSyntaxError(error: BabelSyntaxError): Finding {
  const line = error.loc?.line ?? 1;
  const column = (error.loc?.column ?? 0) + 1;
  const message = error.message.replace(/\s*\(\d+:\d+\)$/, '');
  const reason = error.reasonCode ?? '';
  let code: SourceContractCode = C.WF_SOURCE_SYNTAX;
  let hint = 'fix the syntax at this position; workflow source is a strict-mode script';
  if (MODULE_REASONS.has(reason)) {
    code = C.WF_SOURCE_MODULE_SYNTAX;
    hint = 'remove import/export: a workflow is one script whose result is what run returns';
  } else if (reason === 'StrictWith') {
    code = C.WF_SOURCE_FORBIDDEN_STATEMENT;
    hint = 'name the object explicitly: obj.field instead of with (obj) { field }';
  } else if (UNSUPPORTED_REASONS.has(reason)) {
    code = C.WF_SOURCE_UNSUPPORTED_SYNTAX;
    hint =
      reason === 'UnexpectedUsingDeclaration' || reason === 'UsingDeclarationHasBindingPattern'
        ? 'use const, and release resources explicitly in a finally block'
        : 'rewrite it with plain ES2023 syntax (no decorators or proposal syntax)';
  } else if (reason === 'AwaitNotInAsyncContext') {
    hint = 'await only inside async functions: put the code in async function run(wf, args)';
  }
  return { code, lint: false, message, hint, line, column };
}

function resolveOptions(options: CheckOptions): Required<Omit<CheckOptions, 'filename'>> {
  const profile = options.profile ?? 'default';
  if (profile !== 'default' && profile !== 'authoring') {
    throw new SourceContractError(
      'WF_SOURCE_INVALID_OPTIONS',
      `profile must be 'default' or 'authoring', got ${JSON.stringify(profile)}`,
    );
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  for (const [name, value] of [
    ['maxBytes', maxBytes],
    ['maxDepth', maxDepth],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new SourceContractError(
        'WF_SOURCE_INVALID_OPTIONS',
        `${name} must be a positive integer, got ${String(value)}`,
      );
    }
  }
  return { profile, maxBytes, maxDepth };
}

function analyzeSource(source: string, maxBytes: number, maxDepth: number): Finding[] {
  // Cheap bound first: every UTF-16 unit is at least one UTF-8 byte.
  const bytes = source.length > maxBytes ? source.length : utf8Length(source);
  if (bytes > maxBytes) {
    return [
      {
        code: C.WF_SOURCE_TOO_LARGE,
        lint: false,
        message: `source is ${source.length > maxBytes ? 'at least ' : ''}${bytes} bytes; the limit is ${maxBytes}`,
        hint: 'split the work: move large data into args or files read with wf.readFile',
        line: 1,
        column: 1,
      },
    ];
  }
  const deep = findExcessiveNesting(source, maxDepth);
  if (deep) {
    return [
      {
        code: C.WF_SOURCE_TOO_DEEP,
        lint: false,
        message: `brackets nest more than ${maxDepth} levels deep`,
        hint: 'flatten the code: extract nested parts into helper functions or consts',
        ...positionAt(source, deep.index),
      },
    ];
  }
  let program: ReturnType<typeof parse>['program'];
  try {
    program = parse(source, {
      sourceType: 'script',
      strictMode: true,
      errorRecovery: false,
      attachComment: false,
      plugins: [],
    }).program;
  } catch (error) {
    if (isBabelSyntaxError(error)) return [fromSyntaxError(error)];
    // Backstop for nesting the bracket scan cannot see (long unary or ternary chains).
    if (isStackExhaustion(error)) {
      return [
        {
          code: C.WF_SOURCE_TOO_DEEP,
          lint: false,
          message: 'the source nests too deeply for the parser',
          hint: 'flatten the code: split long operator chains and deep nesting into helpers',
          line: 1,
          column: 1,
        },
      ];
    }
    throw error;
  }
  return new Analyzer().analyze(program);
}

function toDiagnostic(finding: Finding, severity: Diagnostic['severity']): Diagnostic {
  return {
    code: finding.code,
    severity,
    message: finding.message,
    hint: finding.hint,
    line: finding.line,
    column: finding.column,
  };
}

/**
 * Checks untrusted workflow source against the static contract. Lint findings (`WF_SOURCE_LINT_*`) are
 * warnings, or errors with `profile: 'authoring'`. Diagnostics are sorted by position.
 */
export function checkWorkflowSource(source: string, options: CheckOptions = {}): CheckResult {
  const { profile, maxBytes, maxDepth } = resolveOptions(options);
  const findings: Finding[] =
    typeof source === 'string'
      ? analyzeSource(source, maxBytes, maxDepth)
      : [
          {
            code: C.WF_SOURCE_NOT_TEXT,
            lint: false,
            message: `workflow source must be a string, got ${source === null ? 'null' : typeof source}`,
            hint: 'pass the JavaScript text of the workflow',
            line: 1,
            column: 1,
          },
        ];
  findings.sort((a, b) => a.line - b.line || a.column - b.column);
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const f of findings) {
    const key = `${f.code}:${f.line}:${f.column}:${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (f.lint && profile === 'default') warnings.push(toDiagnostic(f, 'warning'));
    else errors.push(toDiagnostic(f, 'error'));
  }
  // Bounded output: a hostile source can repeat one finding 100,000 times.
  if (errors.length > MAX_DIAGNOSTICS) errors.length = MAX_DIAGNOSTICS;
  if (warnings.length > MAX_DIAGNOSTICS) warnings.length = MAX_DIAGNOSTICS;
  return errors.length > 0 ? { ok: false, errors, warnings } : { ok: true, warnings };
}
