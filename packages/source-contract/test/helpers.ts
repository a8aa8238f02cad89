// Small helpers shared by the source-contract tests.
import { type CheckOptions, checkWorkflowSource, type Diagnostic } from '../src/index.js';

/** Wraps a body in a minimal valid workflow that already does agent work. */
export function inRun(body: string, params = 'wf, args'): string {
  return `async function run(${params}) {\n  await wf.runAgent({ name: 'a', prompt: 'p' });\n  ${body}\n}\n`;
}

export function errorsOf(source: string, options?: CheckOptions): Diagnostic[] {
  const result = checkWorkflowSource(source, options);
  return result.ok ? [] : result.errors;
}

export function errorCodes(source: string, options?: CheckOptions): string[] {
  return errorsOf(source, options).map((d) => d.code);
}

export function warningCodes(source: string, options?: CheckOptions): string[] {
  return checkWorkflowSource(source, options).warnings.map((d) => d.code);
}

/** All codes, errors then warnings. */
export function allCodes(source: string, options?: CheckOptions): string[] {
  return [...errorCodes(source, options), ...warningCodes(source, options)];
}
