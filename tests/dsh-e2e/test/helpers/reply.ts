// A run's answer as DSH shows it (apps/plugin run-text.ts): the summary line, the job, error and
// hint lines, then `Result:` and the result. Read back into fields so tests assert on them.
export interface ShownRun {
  readonly workflow?: string;
  readonly status: string;
  readonly runId: string;
  readonly agents?: string;
  readonly jobId?: string;
  readonly resumedFrom?: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly hint?: string;
  readonly result?: unknown;
}

const SUMMARY =
  /^Workflow (?:"(.*)"|workflow) (completed|failed|stopped|denied|interrupted|paused|running|started in the background)(?: in \S+)? \(run (\S+?)(?:; (.+))?\)\.$/;

/** The fields of a shown run; undefined when `text` is not one. */
export function readRun(text: string): ShownRun | undefined {
  const [first = '', ...rest] = text.split('\n');
  const m = SUMMARY.exec(first);
  if (!m) return undefined;
  const body = rest.join('\n');
  const at = body.indexOf('\nResult:\n');
  const head = at >= 0 ? body.slice(0, at) : body;
  const error = /^Error: ([A-Z0-9_]+): (.*)$/m.exec(head);
  const hint = /^Hint: (.*)$/m.exec(head)?.[1];
  const job = /^DSH job (\S+) owns it\./m.exec(head)?.[1];
  const resumed = /^Resumed from run (\S+)\.$/m.exec(head)?.[1];
  let result: unknown;
  if (at >= 0) {
    const raw = body.slice(at + '\nResult:\n'.length);
    try {
      result = JSON.parse(raw);
    } catch {
      result = raw;
    }
  }
  return {
    ...(m[1] !== undefined ? { workflow: m[1] } : {}),
    status: m[2] === 'started in the background' ? 'running' : String(m[2]),
    runId: String(m[3]),
    ...(m[4] !== undefined ? { agents: m[4] } : {}),
    ...(job ? { jobId: job } : {}),
    ...(resumed ? { resumedFrom: resumed } : {}),
    ...(error?.[1] ? { error: { code: error[1], message: error[2] ?? '' } } : {}),
    ...(hint ? { hint } : {}),
    ...(at >= 0 ? { result } : {}),
  };
}

/** A tool's answer: JSON when it is JSON, a shown run when it is one, else `{ raw }`. */
export function readAnswer(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return (readRun(text) as Record<string, unknown> | undefined) ?? { raw: text };
  }
}
