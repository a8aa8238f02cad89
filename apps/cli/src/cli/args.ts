// Reading workflow arguments from `--args JSON` or `--args-file F`, and small option parsers. A
// bad value names the flag, the file and the JSON position, so the user can fix it in one go.
import { resolve } from 'node:path';
import { CliError } from './errors.js';
import { readInputText } from './input-file.js';

export const MAX_ARGS_BYTES = 1024 * 1024;

export interface ArgsOptions {
  readonly args?: string;
  readonly argsFile?: string;
}

export type ArgsSource = { kind: 'flag' } | { kind: 'file'; path: string } | { kind: 'none' };

export async function readArgs(
  options: ArgsOptions,
  cwd: string,
): Promise<{ value: unknown; source: ArgsSource }> {
  if (options.args !== undefined && options.argsFile !== undefined) {
    throw new CliError('WF_CLI_USAGE', 'give --args or --args-file, not both', {
      hint: 'put the JSON inline with --args, or in a file with --args-file',
    });
  }
  if (options.args !== undefined) {
    return { value: parseJson(options.args, '--args'), source: { kind: 'flag' } };
  }
  if (options.argsFile !== undefined) {
    const path = resolve(cwd, options.argsFile);
    const read = await readInputText(path, `--args-file ${options.argsFile}`, MAX_ARGS_BYTES);
    if (!read.ok) {
      const message =
        read.reason === 'missing'
          ? `--args-file ${options.argsFile}: cannot read it (no such file)`
          : read.message;
      throw new CliError('WF_CLI_ARGS_JSON', message, {
        hint:
          read.reason === 'too-large'
            ? 'pass smaller args; a workflow can read workspace files with wf.readFile'
            : 'give a regular file of JSON text (UTF-8); the path is resolved against the current directory',
      });
    }
    const text = read.text;
    return {
      value: parseJson(text, `--args-file ${options.argsFile}`),
      source: { kind: 'file', path },
    };
  }
  return { value: undefined, source: { kind: 'none' } };
}

export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const detail = errorText(e);
    const at = /position (\d+)/.exec(detail);
    const position = at ? Number(at[1]) : undefined;
    const context =
      position === undefined
        ? ''
        : ` near ${JSON.stringify(text.slice(Math.max(0, position - 12), position + 12))}`;
    throw new CliError('WF_CLI_ARGS_JSON', `${where} is not valid JSON: ${detail}${context}`, {
      hint: `quote the whole value for the shell, e.g. --args '{"question":"why?"}'`,
      cause: e,
    });
  }
}

export function parseInteger(value: string, flag: string, min = 0): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
    throw new CliError(
      'WF_CLI_USAGE',
      `${flag} must be an integer >= ${min}, got ${JSON.stringify(value)}`,
      {
        hint: `pass a whole number, e.g. ${flag} ${Math.max(min, 1) * 42}`,
      },
    );
  }
  return n;
}

/** Durations like `30d`, `12h`, `15m`, `90s`, or plain milliseconds. */
export function parseDuration(value: string, flag: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) {
    throw new CliError(
      'WF_CLI_USAGE',
      `${flag} must be a duration like 30d, 12h, 15m or 90s, got ${JSON.stringify(value)}`,
      {
        hint: `e.g. ${flag} 30d`,
      },
    );
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}

export function errorText(e: unknown): string {
  if (
    e &&
    typeof e === 'object' &&
    'code' in e &&
    typeof (e as { code: unknown }).code === 'string'
  ) {
    const code = (e as { code: string }).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
    if (code === 'EISDIR') return 'is a directory';
  }
  return e instanceof Error ? e.message : String(e);
}
