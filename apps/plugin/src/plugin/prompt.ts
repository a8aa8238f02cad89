// The system-prompt section teaching the model when and how to use workflows. DSH interpolates
// `{{name}}` strictly and throws on unknown names, so this text never contains double braces.
import { PATTERN_IDS } from '@wf/bridge';
import type { PluginConfig } from './config.js';
import { NATIVE_WORKFLOW_TOOL } from './native-workflow.js';

/** After the host's own tool guidance (its `workflow` tool sits at 115). */
export const PROMPT_SECTION_ORDER = 116;
export const PROMPT_SECTION_NAME = 'tool:wf-workflows';

/**
 * @param nativeHidden - the native `workflow` tool is denied to every agent, so there is no choice
 *   to steer and the guidance about it is left out.
 */
export function promptSection(config: PluginConfig, nativeHidden = false): string {
  const { listToolName: list, runToolName: run, manageToolName: manage } = config;
  const preferOurs =
    config.preferOverNativeWorkflow && !nativeHidden
      ? [
          `- If DSH's own \`${NATIVE_WORKFLOW_TOOL}\` tool is also offered, use \`${run}\` instead: the native tool runs its script with node:vm in a worker thread with the host's full authority (files, processes, network), while a \`${run}\` script runs in a QuickJS sandbox and can act only through validated, budgeted \`wf\` calls. Use \`${NATIVE_WORKFLOW_TOOL}\` only when the user asks for it by name.`,
        ]
      : [];
  return [
    '## Secure multi-agent workflows',
    `Use \`${run}\` only when the user asks for a workflow, or when the work clearly benefits from orchestrating several child agents (parallel investigation, independent verification, generate-and-filter, iterate until done). For a single focused task, do it yourself or use a plain subagent.`,
    `- \`${list}\` lists the runnable workflows: built-in patterns, then project and personal ones. Prefer a named workflow when one fits: \`${run}\` with \`name\` and \`args\`.`,
    `- To author one inline, call \`${run}\` with \`source\` (the text of \`async function run(wf, args) { ... }\`) and optionally a \`manifest\`. Every manifest field is optional and no other key is accepted: name (kebab-case, default inline-workflow), description, phases (names, default ["main"]), readOnly (default false), maxAgents (default ${config.maxAgents}), maxConcurrency (default ${config.maxConcurrency}, at most maxAgents), plannedAgents, tokenBudget, patterns (any of ${PATTERN_IDS.join(', ')}; default fan-out-and-synthesize).`,
    "- The source runs in a sandbox: it can act only through `wf` (wf.runAgent, wf.spawnAgent + wf.wait, wf.parallel, wf.pipeline, wf.phase, wf.synthesize, wf.workflow, wf.log...), with no imports, timers, network or filesystem; `console.log` writes to the run log. `wf.runAgent` resolves to `{ finalText, structured?, ... }` or null when the child failed. Top-level code is limited to declarations (functions, classes, const/let); prototypes are not reachable (use Object.hasOwn(obj, key)). Inline runs may need the user's approval.",
    '- Children are real agents under the normal sandbox and approvals. Mark tasks that only read as `readOnly: true`; they then get read-only tools.',
    `- \`wait: false\` starts the run in the background and returns its run id; follow it with \`${manage}\` (show, events, pause, resume, stop, rerun, save...).`,
    "- Report the workflow's result to the user; do not re-run a completed workflow to check it.",
    ...preferOurs,
  ].join('\n');
}
