// The command-line layer: parses `wf <verb> [options] <args>` with node:util parseArgs and prints
// help, so starting `wf` loads no argument library, whose load alone would cost more than a light
// verb's whole run. Help text and usage messages follow commander's wording and layout, the
// convention users know. Nothing here knows a verb: src/cli/verbs.ts declares them.
import { parseArgs } from 'node:util';
import { terminalText } from '@wf/bridge/terminal-text';
import { CliError, EXIT } from '../cli/errors.js';

export interface OptionSpec {
  /** `--name`, `--name <value>` or `--no-name` (then the option defaults to true). */
  readonly flags: string;
  readonly description: string;
  /** Applied when the option is absent and shown in help as `(default: "x")`. */
  readonly default?: string;
}

export interface ArgumentSpec {
  readonly name: string;
  readonly required: boolean;
  readonly variadic?: boolean;
  readonly description?: string;
}

export type Positional = string | readonly string[] | undefined;
export type Options = Record<string, string | boolean | undefined>;

export interface VerbSpec {
  readonly name: string;
  readonly description: string;
  readonly args: readonly ArgumentSpec[];
  readonly options: readonly OptionSpec[];
  /** Printed after the generated help (exit codes). */
  readonly helpAfter: string;
  readonly action: (positional: readonly Positional[], options: Options) => Promise<void>;
}

export interface ProgramSpec {
  readonly name: string;
  readonly description: string;
  readonly verbs: readonly VerbSpec[];
}

/** A usage error: `WF_CLI_USAGE`, printed as `error: <message>`, exit 2 (src/cli/main.ts). */
function usage(message: string): CliError {
  return new CliError('WF_CLI_USAGE', message);
}

/** What the command line asked for: run a verb, print help or the version. */
export type Parsed =
  | { kind: 'verb'; verb: VerbSpec; positional: Positional[]; options: Options }
  | { kind: 'help'; text: string; toStderr: boolean; exitCode: typeof EXIT.ok | typeof EXIT.usage }
  | { kind: 'version' };

const HELP: OptionSpec = { flags: '-h, --help', description: 'display help for command' };
const VERSION: OptionSpec = { flags: '-V, --version', description: 'output the version number' };

interface Flag {
  readonly long: string;
  /** The options key: `--args-file` -> argsFile, `--no-progress` -> progress. */
  readonly key: string;
  readonly takesValue: boolean;
  readonly negate: boolean;
  readonly spec: OptionSpec;
}

function flagOf(spec: OptionSpec): Flag {
  const m = /--([a-z][a-z0-9-]*)(?:\s+<[^>]+>)?$/.exec(spec.flags);
  if (!m?.[1]) throw new Error(`bad option flags ${JSON.stringify(spec.flags)}`);
  const negate = m[1].startsWith('no-');
  const name = negate ? m[1].slice(3) : m[1];
  return {
    long: `--${m[1]}`,
    key: name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
    takesValue: spec.flags.includes('<'),
    negate,
    spec,
  };
}

/** Parses `argv` (as in process.argv) against the program; throws a `WF_CLI_USAGE` CliError. */
export function parseCommandLine(
  program: ProgramSpec,
  argv: readonly string[],
  helpWidth: () => number,
): Parsed {
  const args = argv.slice(2);
  const first = args[0];
  if (first === undefined)
    return {
      kind: 'help',
      text: programHelp(program, helpWidth()),
      toStderr: true,
      exitCode: EXIT.usage,
    };
  if (first === '-V' || first === '--version') return { kind: 'version' };
  if (first === '-h' || first === '--help')
    return {
      kind: 'help',
      text: programHelp(program, helpWidth()),
      toStderr: false,
      exitCode: EXIT.ok,
    };
  // A word quoted from the command line is one line (it may be pasted from a listing).
  if (first.startsWith('-')) throw usage(`unknown option '${terminalText(first)}'`);
  if (first === 'help') {
    const topic = args[1];
    if (topic === undefined)
      return {
        kind: 'help',
        text: programHelp(program, helpWidth()),
        toStderr: false,
        exitCode: EXIT.ok,
      };
    const verb = findVerb(program, topic);
    return {
      kind: 'help',
      text: verbHelp(program, verb, helpWidth()),
      toStderr: false,
      exitCode: EXIT.ok,
    };
  }
  const verb = findVerb(program, first);
  return parseVerb(program, verb, args.slice(1), helpWidth);
}

function findVerb(program: ProgramSpec, name: string): VerbSpec {
  const verb = program.verbs.find((v) => v.name === name);
  if (verb) return verb;
  const names = [...program.verbs.map((v) => v.name), 'help'];
  throw usage(`unknown command '${terminalText(name)}'${suggest(name, names)}`);
}

function parseVerb(
  program: ProgramSpec,
  verb: VerbSpec,
  args: readonly string[],
  helpWidth: () => number,
): Parsed {
  const flags = [...verb.options.map(flagOf)];
  const byLong = new Map(flags.map((f) => [f.long, f]));
  // parseArgs does the tokenising (`--a=b`, `--a b`, `--`); strict is off so that the messages
  // below are ours, in the wording users know, and name the option as they typed it.
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const f of flags)
    if (f.takesValue) config[f.long.slice(2)] = { type: 'string' };
    else config[f.long.slice(2)] = { type: 'boolean' };
  const { tokens } = parseArgs({
    args: [...args],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const options: Options = {};
  for (const f of flags) {
    if (f.negate) options[f.key] = true;
    else if (f.spec.default !== undefined) options[f.key] = f.spec.default;
  }
  const positional: string[] = [];
  let unknown: string | undefined;
  let help = false;
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positional.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    if (token.rawName === '-h' || token.rawName === '--help') {
      help = true;
      continue;
    }
    if (unknown !== undefined) continue;
    const flag = byLong.get(token.rawName);
    if (!flag || (!flag.takesValue && token.inlineValue)) {
      unknown = token.inlineValue ? `${token.rawName}=${token.value ?? ''}` : token.rawName;
      continue;
    }
    if (flag.takesValue) {
      if (token.value === undefined) throw usage(`option '${flag.spec.flags}' argument missing`);
      options[flag.key] = token.value;
    } else options[flag.key] = !flag.negate;
  }
  if (help)
    return {
      kind: 'help',
      text: verbHelp(program, verb, helpWidth()),
      toStderr: false,
      exitCode: EXIT.ok,
    };
  if (unknown !== undefined) {
    const candidates = [...flags.map((f) => f.long), '--help'];
    throw usage(
      `unknown option '${terminalText(unknown)}'${unknown.startsWith('--') ? suggest(unknown, candidates) : ''}`,
    );
  }
  const values: Positional[] = [];
  let next = 0;
  for (const a of verb.args) {
    if (a.variadic) {
      const rest = positional.slice(next);
      next = positional.length;
      if (a.required && rest.length === 0) throw usage(`missing required argument '${a.name}'`);
      values.push(rest);
      continue;
    }
    const value = positional[next];
    if (value === undefined && a.required) throw usage(`missing required argument '${a.name}'`);
    if (value !== undefined) next++;
    values.push(value);
  }
  if (next < positional.length) {
    const n = verb.args.length;
    throw usage(
      `too many arguments for '${verb.name}'. Expected ${n} argument${n === 1 ? '' : 's'} but got ${positional.length}.`,
    );
  }
  return { kind: 'verb', verb, positional: values, options };
}

// --- help, laid out as commander laid it out (terms padded to one column, wrapped at the width).

function argUsage(a: ArgumentSpec): string {
  const name = `${a.name}${a.variadic ? '...' : ''}`;
  return a.required ? `<${name}>` : `[${name}]`;
}

function verbUsage(verb: VerbSpec): string {
  return ['[options]', ...verb.args.map(argUsage)].join(' ');
}

function optionDescription(o: OptionSpec): string {
  return o.default === undefined
    ? o.description
    : `${o.description} (default: ${JSON.stringify(o.default)})`;
}

export function programHelp(program: ProgramSpec, width: number): string {
  const options = [VERSION, HELP].map((o) => [o.flags, o.description] as const);
  const commands = [
    ...program.verbs.map((v) => [`${v.name} ${verbUsage(v)}`, v.description] as const),
    ['help [command]', 'display help for command'] as const,
  ];
  const pad = Math.max(...[...options, ...commands].map(([t]) => t.length));
  return [
    `Usage: ${program.name} [options] [command]`,
    '',
    wrap(program.description, width),
    '',
    'Options:',
    ...options.map(([t, d]) => item(t, d, pad, width)),
    '',
    'Commands:',
    ...commands.map(([t, d]) => item(t, d, pad, width)),
    '',
  ].join('\n');
}

export function verbHelp(program: ProgramSpec, verb: VerbSpec, width: number): string {
  const args = verb.args.map((a) => [a.name, a.description ?? ''] as const);
  const options = [...verb.options, HELP].map((o) => [o.flags, optionDescription(o)] as const);
  const pad = Math.max(...[...args, ...options].map(([t]) => t.length));
  const out = [`Usage: ${program.name} ${verb.name} ${verbUsage(verb)}`, ''];
  out.push(wrap(verb.description, width), '');
  if (args.length > 0) out.push('Arguments:', ...args.map(([t, d]) => item(t, d, pad, width)), '');
  out.push('Options:', ...options.map(([t, d]) => item(t, d, pad, width)), '');
  return `${out.join('\n')}${verb.helpAfter}\n`;
}

function item(term: string, description: string, pad: number, width: number): string {
  if (!description) return `  ${term}`;
  const remaining = width - pad - 4;
  const text =
    remaining < 40
      ? description
      : wrap(description, remaining).replace(/\n/g, `\n${' '.repeat(pad + 4)}`);
  return `  ${term.padEnd(pad)}  ${text}`;
}

/** Wraps at whitespace to `width` columns, keeping existing line breaks. */
function wrap(text: string, width: number): string {
  if (width < 40) return text;
  const lines: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const chunks = raw.match(/\s*\S+/g);
    if (!chunks) {
      lines.push('');
      continue;
    }
    let line = chunks[0] ?? '';
    for (const chunk of chunks.slice(1)) {
      if (line.length + chunk.length <= width) line += chunk;
      else {
        lines.push(line);
        line = chunk.trimStart();
      }
    }
    lines.push(line);
  }
  return lines.join('\n');
}

// --- "did you mean": the closest names within 3 edits (optimal string alignment distance).

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Math.max(a.length, b.length);
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) d[i] = [i];
  for (let j = 0; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let j = 1; j <= b.length; j++)
    for (let i = 1; i <= a.length; i++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let v = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, (d[i - 2] as number[])[j - 2]! + 1);
      row[j] = v;
    }
  return (d[a.length] as number[])[b.length]!;
}

function suggest(word: string, candidates: readonly string[]): string {
  const options = word.startsWith('--');
  const bare = options ? word.slice(2) : word;
  let best = 3;
  let similar: string[] = [];
  for (const c of new Set(candidates.map((c) => (options ? c.slice(2) : c)))) {
    if (c.length <= 1) continue;
    const dist = distance(bare, c);
    const length = Math.max(bare.length, c.length);
    if ((length - dist) / length <= 0.4) continue;
    if (dist < best) {
      best = dist;
      similar = [c];
    } else if (dist === best) similar.push(c);
  }
  similar.sort((a, b) => a.localeCompare(b));
  const named = similar.map((c) => (options ? `--${c}` : c));
  if (named.length > 1) return `\n(Did you mean one of ${named.join(', ')}?)`;
  return named.length === 1 ? `\n(Did you mean ${named[0]}?)` : '';
}
