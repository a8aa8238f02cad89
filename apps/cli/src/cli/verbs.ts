// Registers the run and run-store verbs on the `wf` program (commander). Each verb gets `--json`
// and its exit codes in `--help`; usage errors exit 2 through main.ts's exitOverride, which
// subcommands inherit.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { ExitCode } from './errors.js';

// Each verb loads its module on use: `wf runs` should not pay for the engine and its sandbox.
const run = () => import('./run.js');
const runs = () => import('./runs.js');

/** `wf show` lists each agent up to this many; above it, one line per phase (`--agents`: all). */
export const SHOW_AGENTS_MAX = 30;

export const EXIT_CODES_HELP = `
Exit codes:
  0    ok (run/resume: the workflow completed)
  1    the workflow failed or was denied
  2    usage or input error (bad flag, invalid JSON, args failing the input schema, invalid capsule)
  3    not found (unknown workflow or run id)
  4    conflict (the run is active, the name is taken, the run cannot be resumed)
  5    a corrupt or unreadable run directory
  70   internal error (a bug in wf)
  130  interrupted by Ctrl-C (a run is recorded stopped)
Every verb takes --json: one JSON document on stdout ({ "ok": ... }), events as JSON Lines.`;

type Opts = { json?: boolean } & Record<string, unknown>;

/** Adds `--json`, the exit-code help and the action; the context is named after the command. */
function verb<A extends unknown[]>(
  command: Command,
  body: (ctx: CliContext, ...args: [...A, Opts]) => Promise<ExitCode>,
): Command {
  return command
    .option('--json', 'machine-readable output on stdout')
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (...raw: unknown[]) => {
      // commander passes the positional arguments, then the options, then the command.
      const opts = raw[raw.length - 2] as Opts;
      const positional = raw.slice(0, -2) as A;
      const { processContext, runVerb } = await import('./context.js');
      await runVerb(processContext(command.name(), opts.json === true), (ctx) =>
        body(ctx, ...positional, opts),
      );
    });
}

/** `--delay-ms` and `--no-progress`, shared by the verbs that run a workflow (run, resume). */
function simulatedRun(command: Command, delayHelp: string): Command {
  return command
    .option('--delay-ms <ms>', `base duration of a simulated child${delayHelp} (default 400)`)
    .option('--no-progress', 'no live progress on stderr')
    .option(
      '--token-budget <n>',
      'token budget if the manifest sets none (the tighter applies); default none: simulated agents spend nothing',
    )
    .option('--wall-ms <ms>', 'wall limit of the run, paused time excluded (default none)')
    .option(
      '--child-wall-ms <ms>',
      'wall limit of one child: a child still running is stopped and fails (default none)',
    )
    .option(
      '--max-agents <n>',
      "the most children this run may start (default 100; a capsule's maxAgents still applies)",
    );
}

export function registerRunVerb(program: Command): void {
  verb<[string]>(
    simulatedRun(
      program
        .command('run')
        .description('run a workflow with simulated agents (no model is called) and record it')
        .argument(
          '<workflow>',
          'a name from `wf list`, or a file: .workflow.json capsule or .js source',
        )
        .option(
          '--args <json>',
          "workflow arguments as JSON (default: the capsule's first example, else {})",
        )
        .option('--args-file <file>', 'read the arguments from a JSON file')
        .option(
          '--agents <provider>',
          'the agent provider; the command line has `simulated` only',
          'simulated',
        )
        .option(
          '--seed <n>',
          'seed for Math.random in the workflow and the simulated answers (default 1; recorded, and reused by wf resume)',
        )
        .option(
          '--trust-local',
          'confirm running a trusted-local catalog module (full Node authority)',
        )
        .option('--engine <engine>', 'embedded (default) or restate (durable, on a Restate server)')
        .option('--restate <url>', 'with --engine restate: the Restate ingress URL'),
      ', varied per child',
    ),
    async (ctx, workflow, opts) => (await run()).runCommand(ctx, workflow, opts as never),
  );
}

export function registerResumeVerb(program: Command): void {
  verb<[string]>(
    simulatedRun(
      program
        .command('resume')
        .description(
          're-run a recorded run from its journal (completed children are not re-run), then continue live',
        )
        .argument('<runId>', 'a run id from `wf runs`, or `last`')
        .option(
          '--simulate',
          'continue a run recorded with real (DSH) agents on simulated ones; the new run is labelled simulated',
        ),
      ' that still has to run',
    ),
    async (ctx, runId, opts) => (await run()).resumeCommand(ctx, runId, opts as never),
  );
}

export function registerListVerb(program: Command): void {
  verb<[]>(
    program
      .command('list')
      .description(
        'list workflows: built-ins, patterns, project and personal catalog, with scope, trust and validity',
      ),
    async (ctx) => (await import('./list.js')).listCommand(ctx),
  );
}

export function registerRunsVerb(program: Command): void {
  verb<[]>(
    program
      .command('runs')
      .description('list recent runs recorded in this directory (.dsh/workflow-runs)')
      .option('--limit <n>', 'how many (default 20)')
      .option('--all', 'every run'),
    async (ctx, opts) => (await runs()).runsCommand(ctx, opts as never),
  );
}

export function registerShowVerb(program: Command): void {
  verb<[string]>(
    program
      .command('show')
      .description('show one run: summary, phases, agents, cost')
      .argument('<runId>', 'a run id, a display name, or `last`')
      .option(
        '--agents',
        `list every agent (by default a run with more than ${SHOW_AGENTS_MAX} is summarised per phase)`,
      ),
    async (ctx, runId, opts) => (await runs()).showCommand(ctx, runId, opts as never),
  );
}

export function registerEventsVerb(program: Command): void {
  verb<[string]>(
    program
      .command('events')
      .description("print a run's event log (--json: JSON Lines)")
      .argument('<runId>', 'a run id, a display name, or `last`')
      .option('--follow', 'keep printing new events until the run ends (Ctrl-C to stop)')
      .option('--after <seq>', 'only events after this sequence number')
      .option('--interval-ms <ms>', 'poll interval for --follow (default 200)'),
    async (ctx, runId, opts) => (await runs()).eventsCommand(ctx, runId, opts as never),
  );
}

export function registerSaveVerb(program: Command): void {
  verb<[string, string]>(
    program
      .command('save')
      .description("save a run's workflow into the catalog as a capsule")
      .argument('<runId>', 'the run whose workflow to save (or `last`)')
      .argument('<name>', 'the new workflow name (kebab-case)')
      .option(
        '--scope <scope>',
        'project (.dsh/workflows, default) or personal ($DSH_HOME/workflows)',
      )
      .option('--replace', 'replace an existing workflow of that name (the old one is archived)'),
    async (ctx, runId, name, opts) =>
      (await import('./save.js')).saveCommand(ctx, runId, name, opts as never),
  );
}

export function registerDeleteRunVerb(program: Command): void {
  verb<[string]>(
    program
      .command('delete-run')
      .description('delete an ended run (an active run is never deleted)')
      .argument('<runId>', 'a run id')
      .option('--force', 'also delete a stale non-terminal record whose owner is gone'),
    async (ctx, runId, opts) => (await runs()).deleteRunCommand(ctx, runId, opts as never),
  );
}

export function registerPruneVerb(program: Command): void {
  verb<[]>(
    program
      .command('prune')
      .description('delete old ended runs (live and unfinished runs are never touched)')
      .option('--keep <n>', 'keep the newest n ended runs (default 20)')
      .option('--older-than <age>', 'only prune runs that ended before this age, e.g. 30d, 12h')
      .option('--dry-run', 'print what would be pruned, delete nothing'),
    async (ctx, opts) => (await runs()).pruneCommand(ctx, opts as never),
  );
}

export function registerReportVerb(program: Command): void {
  verb<[string]>(
    program
      .command('report')
      .description('write a self-contained HTML timeline of a run')
      .argument('<runId>', 'a run id, a display name, or `last`')
      .option('--out <file>', 'where to write it (default <runId>.report.html)'),
    async (ctx, runId, opts) => (await runs()).reportCommand(ctx, runId, opts as never),
  );
}

/** The saved-workflow verbs: rename, delete, archived, restore (catalog-verbs.ts). */
export function registerCatalogVerbs(program: Command): void {
  const catalog = () => import('./catalog-verbs.js');
  const scope = '--scope <scope>';
  const scopeHelp = 'project or personal (default: wherever the name is found)';
  verb<[string, string]>(
    program
      .command('rename')
      .description('rename a saved workflow (the old name is archived and can be restored)')
      .argument('<from>', 'the saved workflow')
      .argument('<to>', 'its new name (kebab-case)')
      .option(scope, scopeHelp),
    async (ctx, from, to, opts) => (await catalog()).renameCommand(ctx, from, to, opts as never),
  );
  verb<[string]>(
    program
      .command('delete')
      .description('delete a saved workflow (archived first: `wf restore` brings it back)')
      .argument('<name>', 'the saved workflow (runs: wf delete-run)')
      .option(scope, scopeHelp),
    async (ctx, name, opts) => (await catalog()).deleteCommand(ctx, name, opts as never),
  );
  verb<[string | undefined]>(
    program
      .command('archived')
      .description('list archived versions of saved workflows, newest first')
      .argument('[name]', 'only the versions of this workflow')
      .option(scope, 'only this catalog: project or personal'),
    async (ctx, name, opts) => (await catalog()).archivedCommand(ctx, name, opts as never),
  );
  verb<[string]>(
    program
      .command('restore')
      .description('restore an archived version into the catalog (the archive keeps its copy)')
      .argument('<id>', 'an archived version id from `wf archived`')
      .option('--as <name>', 'restore under another name')
      .option('--replace', 'replace a current workflow of that name (it is archived first)')
      .option(scope, 'the catalog the archived version is in: project or personal'),
    async (ctx, id, opts) => (await catalog()).restoreCommand(ctx, id, opts as never),
  );
}

export function registerWorkerVerb(program: Command): void {
  verb<[]>(
    program
      .command('worker')
      .description(
        'serve @wf runs from a Restate server with simulated agents, recording them in this directory',
      )
      .option('--restate <url>', 'the Restate ingress URL (e.g. http://127.0.0.1:8080)')
      .option(
        '--admin <url>',
        'the admin URL to register with (default: the ingress host, port 9070)',
      )
      .option('--port <n>', 'port to listen on (default: a free one)')
      .option(
        '--advertise <url>',
        'the address to register (a load balancer in front of N workers)',
      )
      .option('--concurrency <n>', 'children at once across the whole deployment (default 16)')
      .option('--delay-ms <ms>', 'base duration of a simulated child (default 400)'),
    async (ctx, opts) => (await import('./restate.js')).workerCommand(ctx, opts as never),
  );
}
