// The `wf` verbs: arguments, options and help text (command-line.ts parses and prints them), and
// each verb's module, imported only when that verb runs: `wf runs` should not pay for the engine.
// Usage errors exit 2 (main.ts).
import type {
  ArgumentSpec,
  OptionSpec,
  Options,
  Positional,
  VerbSpec,
} from '../startup/command-line.js';
import type { CliContext } from './context.js';
import { EXIT, type ExitCode, exitCodesHelp } from './errors.js';

const run = () => import('./run.js');
const runs = () => import('./runs.js');
const catalog = () => import('./catalog-verbs.js');

/** `wf show` lists each agent up to this many; above it, one line per phase (`--agents`: all). */
export const SHOW_AGENTS_MAX = 30;

export const EXIT_CODES_HELP = `
Exit codes:
${exitCodesHelp()}
Every verb takes --json: one JSON document on stdout ({ "ok": ... }), events as JSON Lines.`;

const JSON_OPTION: OptionSpec = {
  flags: '--json',
  description: 'machine-readable output on stdout',
};

const required = (name: string, description: string): ArgumentSpec => ({
  name,
  required: true,
  description,
});
const opt = (flags: string, description: string, dflt?: string): OptionSpec =>
  dflt === undefined ? { flags, description } : { flags, description, default: dflt };

// Verb bodies take their options as the parsed record; each module narrows it to its own type.
type Body = (ctx: CliContext, positional: readonly Positional[], opts: never) => Promise<ExitCode>;

/** A verb with `--json` and the exit-code help; the context is named after the verb. */
function verb(
  name: string,
  description: string,
  args: readonly ArgumentSpec[],
  options: readonly OptionSpec[],
  body: Body,
): VerbSpec {
  return {
    name,
    description,
    args,
    options: [...options, JSON_OPTION],
    helpAfter: EXIT_CODES_HELP,
    action: async (positional, opts: Options) => {
      const { processContext, runVerb } = await import('./context.js');
      await runVerb(processContext(name, opts.json === true), (ctx) =>
        body(ctx, positional, opts as never),
      );
    },
  };
}

/** `--delay-ms`, `--no-progress` and the cost guards, shared by run and resume. */
function simulatedRun(delayHelp: string): OptionSpec[] {
  return [
    opt('--delay-ms <ms>', `base duration of a simulated child${delayHelp} (default 400)`),
    opt('--no-progress', 'no live progress on stderr'),
    opt(
      '--token-budget <n>',
      'token budget if the manifest sets none (the tighter applies); default none: simulated agents spend nothing',
    ),
    opt('--wall-ms <ms>', 'wall limit of the run, paused time excluded (default none)'),
    opt(
      '--child-wall-ms <ms>',
      'wall limit of one child: a child still running is stopped and fails (default none)',
    ),
    opt(
      '--max-agents <n>',
      "the most children this run may start (default 100; a capsule's maxAgents still applies)",
    ),
  ];
}

const RUN_ID = required('runId', 'a run id, a display name, or `last`');
/** The read verbs' other source of runs: a Restate server's durable records. */
const RESTATE_SOURCE = [
  opt(
    '--restate <url>',
    "read the run's durable record from this Restate ingress (every worker's part of it) instead of this directory",
  ),
  opt(
    '--admin <url>',
    'with --restate: the admin URL, to list runs (default: the ingress host, port 9070)',
  ),
];
const SCOPE = '--scope <scope>';
const SCOPE_HELP = 'project or personal (default: wherever the name is found)';
const str = (p: Positional): string => p as string;

const CHECK: VerbSpec = {
  name: 'check',
  description:
    'check workflow sources (.js) and capsules (.workflow.json) against the source contract',
  args: [{ name: 'file', required: true, variadic: true, description: 'workflow files to check' }],
  options: [
    opt('--json', 'print one JSON document: { files: [{ file, ok, errors, warnings }], ok }'),
    opt(
      '--profile <profile>',
      "'default' (lints are warnings) or 'authoring' (lints are errors)",
      'default',
    ),
    opt(
      '--args <json>',
      'check these args against each capsule input schema (and smoke with them)',
    ),
    opt('--smoke', 'also run each clean workflow once on instant simulated agents'),
  ],
  helpAfter: `\nExit codes: ${EXIT.ok} no errors (warnings allowed), ${EXIT.failed} contract, capsule or smoke errors, ${EXIT.usage} usage or input errors.`,
  action: async (positional, opts) =>
    (await import('./check.js')).checkAction(positional[0] as string[], opts as never),
};

/** Every verb, in the order `wf --help` lists them. */
export const VERBS: readonly VerbSpec[] = [
  CHECK,
  verb(
    'run',
    'run a workflow with simulated agents (no model is called) and record it',
    [
      required(
        'workflow',
        'a name from `wf list`, or a file: .workflow.json capsule or .js source',
      ),
    ],
    [
      opt(
        '--args <json>',
        "workflow arguments as JSON (default: the capsule's first example, else {})",
      ),
      opt('--args-file <file>', 'read the arguments from a JSON file'),
      opt(
        '--agents <provider>',
        'the agent provider; the command line has `simulated` only',
        'simulated',
      ),
      opt(
        '--seed <n>',
        'seed for Math.random in the workflow and the simulated answers (default 1; recorded, and reused by wf resume)',
      ),
      opt('--trust-local', 'confirm running a trusted-local catalog module (full Node authority)'),
      opt('--engine <engine>', 'embedded (default) or restate (durable, on a Restate server)'),
      opt('--restate <url>', 'with --engine restate: the Restate ingress URL'),
      opt(
        '--admin <url>',
        'with --engine restate: the admin URL, to say why a run waits (default: the ingress host, port 9070)',
      ),
      ...simulatedRun(', varied per child'),
    ],
    async (ctx, [workflow], opts) => (await run()).runCommand(ctx, str(workflow), opts),
  ),
  verb(
    'resume',
    're-run a recorded run from its journal (completed children are not re-run), then continue live',
    [required('runId', 'a run id from `wf runs`, or `last`')],
    [
      opt(
        '--simulate',
        'continue a run recorded with real (DSH) agents on simulated ones; the new run is labelled simulated',
      ),
      ...simulatedRun(' that still has to run'),
      opt('--restate <url>', 'resume a paused run on this Restate ingress (wf pause) instead'),
    ],
    async (ctx, [runId], opts) =>
      (opts as { restate?: string }).restate
        ? (await import('./restate.js')).controlCommand(ctx, str(runId), 'resume', opts)
        : (await run()).resumeCommand(ctx, str(runId), opts),
  ),
  verb(
    'pause',
    'pause a run on a Restate server: no child starts until `wf resume --restate` (running ones finish)',
    [required('runId', 'the run id (wf runs --restate lists them)')],
    [opt('--restate <url>', 'the Restate ingress URL')],
    async (ctx, [runId], opts) =>
      (await import('./restate.js')).controlCommand(ctx, str(runId), 'pause', opts),
  ),
  verb(
    'stop',
    'stop a run on a Restate server: its children are stopped where they run, the run ends stopped',
    [required('runId', 'the run id (wf runs --restate lists them)')],
    [
      opt('--restate <url>', 'the Restate ingress URL'),
      opt('--reason <text>', 'recorded as why the run stopped'),
    ],
    async (ctx, [runId], opts) =>
      (await import('./restate.js')).controlCommand(ctx, str(runId), 'stop', opts),
  ),
  verb(
    'list',
    'list workflows: built-ins, patterns, project and personal catalog, with scope, trust and validity',
    [],
    [],
    async (ctx) => (await import('./list.js')).listCommand(ctx),
  ),
  verb(
    'runs',
    'list recent runs recorded in this directory (.dsh/workflow-runs)',
    [],
    [opt('--limit <n>', 'how many (default 20)'), opt('--all', 'every run'), ...RESTATE_SOURCE],
    async (ctx, _, opts) => (await runs()).runsCommand(ctx, opts),
  ),
  verb(
    'show',
    'show one run: summary, phases, agents, cost',
    [RUN_ID],
    [
      opt(
        '--agents',
        `list every agent (by default a run with more than ${SHOW_AGENTS_MAX} is summarised per phase)`,
      ),
      ...RESTATE_SOURCE,
    ],
    async (ctx, [runId], opts) => (await runs()).showCommand(ctx, str(runId), opts),
  ),
  verb(
    'events',
    "print a run's event log (--json: JSON Lines)",
    [RUN_ID],
    [
      opt('--follow', 'keep printing new events until the run ends (Ctrl-C to stop)'),
      opt('--after <seq>', 'only events after this sequence number'),
      opt('--interval-ms <ms>', 'poll interval for --follow (default 200)'),
      ...RESTATE_SOURCE,
    ],
    async (ctx, [runId], opts) => (await runs()).eventsCommand(ctx, str(runId), opts),
  ),
  verb(
    'report',
    'write a self-contained HTML timeline of a run',
    [RUN_ID],
    [opt('--out <file>', 'where to write it (default <runId>.report.html)'), ...RESTATE_SOURCE],
    async (ctx, [runId], opts) => (await runs()).reportCommand(ctx, str(runId), opts),
  ),
  verb(
    'save',
    "save a run's workflow into the catalog as a capsule",
    [
      required('runId', 'the run whose workflow to save (or `last`)'),
      required('name', 'the new workflow name (kebab-case)'),
    ],
    [
      opt('--scope <scope>', 'project (.dsh/workflows, default) or personal ($DSH_HOME/workflows)'),
      opt('--replace', 'replace an existing workflow of that name (the old one is archived)'),
    ],
    async (ctx, [runId, name], opts) =>
      (await import('./save.js')).saveCommand(ctx, str(runId), str(name), opts),
  ),
  verb(
    'delete-run',
    'delete an ended run (an active run is never deleted)',
    [required('runId', 'a run id')],
    [
      opt('--force', 'also delete a stale non-terminal record whose owner is gone'),
      opt(
        '--restate <url>',
        'delete it from this Restate ingress instead: its journal, record and the large answers only it stored',
      ),
      opt('--admin <url>', 'with --restate: the admin URL (default: the ingress host, port 9070)'),
    ],
    async (ctx, [runId], opts) => (await runs()).deleteRunCommand(ctx, str(runId), opts),
  ),
  verb(
    'prune',
    'delete old ended runs (live and unfinished runs are never touched)',
    [],
    [
      opt('--keep <n>', 'keep the newest n ended runs (default 20)'),
      opt('--older-than <age>', 'only prune runs that ended before this age, e.g. 30d, 12h'),
      opt('--dry-run', 'print what would be pruned, delete nothing'),
    ],
    async (ctx, _, opts) => (await runs()).pruneCommand(ctx, opts),
  ),
  verb(
    'rename',
    'rename a saved workflow (the old name is archived and can be restored)',
    [required('from', 'the saved workflow'), required('to', 'its new name (kebab-case)')],
    [opt(SCOPE, SCOPE_HELP)],
    async (ctx, [from, to], opts) => (await catalog()).renameCommand(ctx, str(from), str(to), opts),
  ),
  verb(
    'delete',
    'delete a saved workflow (archived first: `wf restore` brings it back)',
    [required('name', 'the saved workflow (runs: wf delete-run)')],
    [opt(SCOPE, SCOPE_HELP)],
    async (ctx, [name], opts) => (await catalog()).deleteCommand(ctx, str(name), opts),
  ),
  verb(
    'archived',
    'list archived versions of saved workflows, newest first',
    [{ name: 'name', required: false, description: 'only the versions of this workflow' }],
    [opt(SCOPE, 'only this catalog: project or personal')],
    async (ctx, [name], opts) =>
      (await catalog()).archivedCommand(ctx, name as string | undefined, opts),
  ),
  verb(
    'restore',
    'restore an archived version into the catalog (the archive keeps its copy)',
    [required('id', 'an archived version id from `wf archived`')],
    [
      opt('--as <name>', 'restore under another name'),
      opt('--replace', 'replace a current workflow of that name (it is archived first)'),
      opt(SCOPE, 'the catalog the archived version is in: project or personal'),
    ],
    async (ctx, [id], opts) => (await catalog()).restoreCommand(ctx, str(id), opts),
  ),
  verb(
    'worker',
    'serve @wf runs from a Restate server with simulated agents, recording them in this directory',
    [],
    [
      opt('--restate <url>', 'the Restate ingress URL (e.g. http://127.0.0.1:8080)'),
      opt('--admin <url>', 'the admin URL to register with (default: the ingress host, port 9070)'),
      opt('--port <n>', 'port to listen on (default: a free one)'),
      opt('--advertise <url>', 'the address to register (a load balancer in front of N workers)'),
      opt('--concurrency <n>', 'children at once across the whole deployment (default 16)'),
      opt(
        '--semaphore-shards <n>',
        'split the deployment cap over N semaphore keys: faster child starts, cap still held (default 1)',
      ),
      opt(
        '--delay-ms <ms>',
        'base duration of a simulated child for runs that do not carry one (wf run sends its own; default 400)',
      ),
      opt(
        '--workspace <dir>',
        "root directory for the runs' wf.readFile (default none: readFile is refused)",
      ),
      opt('--verbose', 'log every child and the Restate SDK (default: one line per run)'),
    ],
    async (ctx, _, opts) => (await import('./restate.js')).workerCommand(ctx, opts),
  ),
];
