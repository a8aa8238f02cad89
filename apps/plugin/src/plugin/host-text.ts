// Everything the plugin hands DSH to show passes terminalText, the one sanitizer both apps use
// (invariant 13): DSH draws tool output, command answers, job labels and output, approval reasons
// and user questions in its terminal UI, and run text is untrusted (model-written code produced
// it). These wrappers sit where the plugin meets the host, so no path inside can forget them.
// Child labels and phases are sanitized by the run router (routing.ts), before the provider.
import { terminalText } from '@wf/bridge/terminal-text';
import type { HostJobs, HostQuestion } from '@wf/dsh-adapter';
import type {
  CommandInvocation,
  CommandResult,
  OptionalServices,
  ToolDefinition,
} from './host-context.js';

/** Multi-line text for DSH to show: controls escaped, line breaks and tabs kept. */
const shown = (text: string): string => terminalText(text, 'lines');

/**
 * An error's message on one line, escaped, on the error itself: its class, code and brand stay,
 * so DSH and `PluginError.is` see the same error.
 */
function withShownMessage(error: unknown): unknown {
  if (error instanceof Error) error.message = terminalText(error.message);
  return error;
}

/** A tool whose rendered text and failure messages pass the sanitizer. */
export function shownTool(tool: ToolDefinition): ToolDefinition {
  return {
    ...tool,
    output: {
      ...tool.output,
      render: (args, value) =>
        tool.output.render(args, value).map((block) => ({ ...block, text: shown(block.text) })),
    },
    execute: (args, exec) =>
      tool.execute(args, exec).catch((error: unknown) => {
        throw withShownMessage(error);
      }),
  };
}

/** A `/workflow` handler whose answers pass the sanitizer. */
export function shownCommand(
  handler: (invocation: CommandInvocation) => CommandResult | Promise<CommandResult>,
): (invocation: CommandInvocation) => Promise<CommandResult> {
  return async (invocation) => {
    const result = await handler(invocation);
    return result.text === undefined ? result : { ...result, text: shown(result.text) };
  };
}

function shownQuestion(q: HostQuestion): HostQuestion {
  return {
    ...q,
    question: shown(q.question),
    ...(q.header === undefined ? {} : { header: terminalText(q.header) }),
    ...(q.detail === undefined ? {} : { detail: shown(q.detail) }),
    ...(q.options === undefined
      ? {}
      : {
          options: q.options.map((o) => ({
            ...o,
            label: terminalText(o.label),
            ...(o.description === undefined ? {} : { description: shown(o.description) }),
          })),
        }),
  };
}

/**
 * `service` with one method replaced; every other member (a user-questions service's `provider`,
 * say, which the host facts read) is the service's own, its methods called on the service itself.
 */
function withMethod<T extends object, K extends keyof T>(service: T, key: K, method: T[K]): T {
  return new Proxy(service, {
    get(target, name) {
      if (name === key) return method;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function shownJobs(jobs: HostJobs): HostJobs {
  return withMethod(jobs, 'start', (spec) =>
    jobs.start({
      ...spec,
      label: terminalText(spec.label),
      run: () => {
        const running = spec.run();
        const readOutput = running.readOutput?.bind(running);
        return {
          cancel: (reason) => running.cancel(reason),
          done: running.done.then((outcome) => ({
            ...outcome,
            ...(outcome.detail === undefined ? {} : { detail: shown(outcome.detail) }),
            ...(outcome.output === undefined ? {} : { output: shown(outcome.output) }),
          })),
          ...(readOutput ? { readOutput: () => shown(readOutput()) } : {}),
        };
      },
    }),
  );
}

/** The host's optional services with every text they show passed through the sanitizer. */
export function shownServices(services: OptionalServices): OptionalServices {
  const { approval, userQuestions, jobs } = services;
  return {
    ...services,
    approval:
      approval &&
      withMethod(approval, 'request', (request) =>
        approval.request({
          ...request,
          ...(request.reason === undefined ? {} : { reason: shown(request.reason) }),
        }),
      ),
    userQuestions:
      userQuestions &&
      withMethod(userQuestions, 'ask', (request) =>
        userQuestions.ask({ ...request, questions: request.questions.map(shownQuestion) }),
      ),
    jobs: jobs && shownJobs(jobs),
  };
}
