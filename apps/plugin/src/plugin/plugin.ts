// The Cordis plugin DSH mounts: registers the tools, the /workflow command and the prompt
// section, all tied to this plugin's fiber; unload stops and awaits every active run.
import type { ShippedWorkflows } from '@wf/catalog-fs';
import { BUILT_INS, PATTERNS } from '@wf/patterns';
import { ConfigSchema, type PluginConfig } from './config.js';
import { createCommandHandler, COMMAND_HELP } from './command.js';
import { optionalServices, type PluginHost } from './host-context.js';
import { shownCommand, shownServices, shownTool } from './host-text.js';
import { Manager } from './manage.js';
import { hideNativeWorkflowTool } from './native-workflow.js';
import { PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER, promptSection } from './prompt.js';
import { createReviewRunner } from './review.js';
import { WorkflowService } from './service.js';
import { PLUGIN_NAME } from './state.js';
import { createTools } from './tools.js';

export const name = PLUGIN_NAME;
/** Only services every DSH profile mounts: an inject that never appears aborts the whole boot. */
export const inject = ['tools', 'subagents', 'systemPrompt', 'commands'];
export const Config = ConfigSchema;

export interface AppliedPlugin {
  readonly service: WorkflowService;
  readonly manager: Manager;
}

export function apply(
  ctx: PluginHost,
  config: PluginConfig,
  shipped: ShippedWorkflows = { builtIns: BUILT_INS, patterns: PATTERNS },
): AppliedPlugin {
  // What DSH shows of a run passes the one sanitizer (host-text.ts): tools, the command, services.
  const service = new WorkflowService(
    ctx,
    config,
    () => shownServices(optionalServices(ctx)),
    shipped,
  );
  const manager = new Manager(service);
  const review = createReviewRunner(service);
  for (const tool of createTools(service, manager)) ctx.tools.register(shownTool(tool));
  const nativeHidden = config.hideNativeWorkflow && hideNativeWorkflowTool(ctx);
  ctx.systemPrompt.section({
    name: PROMPT_SECTION_NAME,
    order: PROMPT_SECTION_ORDER,
    text: promptSection(config, nativeHidden),
  });
  service.noticeInterrupted();
  ctx.commands.register({
    name: config.commandName,
    description: 'Run and manage multi-agent workflows (/workflow help)',
    input: { hint: COMMAND_HELP.split('\n')[1]?.trim() ?? 'list' },
    handler: shownCommand(createCommandHandler(service, manager, review)),
  });
  // Registered last so it runs first on unload (reverse order): runs stop while tools still exist.
  ctx.effect(() => () => service.dispose(), 'wf-workflows: stop active runs');
  return { service, manager };
}
