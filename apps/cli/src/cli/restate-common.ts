// What the Restate verbs share: @wf/restate's errors as the CLI's (exit codes), and the admin URL
// next to an ingress URL.
import { CliError } from './errors.js';

/** The admin URL next to an ingress URL: same host, Restate's default admin port 9070. */
export function adminNextTo(ingress: string): string {
  const u = new URL(ingress);
  u.port = '9070';
  return u.toString().replace(/\/+$/, '');
}

const UNAVAILABLE_HINTS: Record<string, string> = {
  WF_RESTATE_UNREACHABLE:
    'start the server (README, "Scaling out") and check the URL: the ingress is port 8080 by default, the admin API 9070',
  WF_RESTATE_NOT_RESTATE: '--restate takes the Restate ingress URL (port 8080 by default)',
  WF_RESTATE_NO_WORKER: 'start a worker first: ./wf worker --restate <ingress URL>',
};

/**
 * @wf/restate's errors as the CLI's: a server that is unreachable, not Restate or without a
 * worker exits 69 (WF_CLI_ENGINE_UNAVAILABLE, the Restate code in the message and details); bad
 * options are usage errors. Anything else is left as it is.
 */
export function cliErrorOf(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('WF_RESTATE_') || CliError.is(e)) return e;
  const message = String((e as Error).message);
  if (code === 'WF_RESTATE_INVALID_OPTIONS')
    return new CliError('WF_CLI_USAGE', message, { cause: e });
  const hint = UNAVAILABLE_HINTS[code];
  return new CliError('WF_CLI_ENGINE_UNAVAILABLE', `${code}: ${message}`, {
    ...(hint ? { hint } : {}),
    details: { code },
    cause: e,
  });
}

export async function restateCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw cliErrorOf(e);
  }
}
