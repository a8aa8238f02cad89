// loop-until-done: rounds of investigation, each told what earlier rounds found, until a round
// reports no new findings, a round fails, or the round cap; then a convergence synthesis.
// Agents: one per round (default 4, at most 5) plus the synthesis; one at a time.

const DEFAULT_ROUNDS = 4;
const MAX_ROUNDS = 5;

/** @type {JsonSchemaObject} */
const ROUND_SCHEMA = {
  type: 'object',
  properties: {
    findings: {
      type: 'array',
      items: {
        type: 'object',
        properties: { title: { type: 'string' }, detail: { type: 'string' } },
        required: ['title', 'detail'],
        additionalProperties: false,
      },
    },
  },
  required: ['findings'],
  additionalProperties: false,
};

/**
 * @typedef {{ request: string, maxRounds?: number }} Args
 * @typedef {{ findings: { title: string, detail: string }[] }} Round
 * @typedef {{ title: string, detail: string, round: number, taskId: string }} Finding
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const request = args.request;
  const maxRounds = clampInt(args.maxRounds, 1, MAX_ROUNDS, DEFAULT_ROUNDS);
  const failures = [];
  const findings = [];
  const rounds = [];
  let stopReason = 'round-cap';

  await wf.phase('iterate', async () => {
    // Bounded by the round cap; each round either adds findings or ends the loop.
    for (let round = 1; round <= maxRounds; round += 1) {
      const known = findings.map((f) => `- ${f.title}`);
      const task = /** @type {TaskResult<Round> | null} */ (
        await wf.runAgent({
          name: `round-${round}`,
          prompt: lines(
            `Round ${round} of at most ${maxRounds} on the request below.`,
            known.length > 0
              ? 'Earlier rounds already found the items listed; report only findings that are new.'
              : 'Report every finding you can support with evidence (file paths, documents).',
            'If you find nothing new, return an empty list: that ends the investigation.',
            '',
            `Request: ${request}`,
            ...(known.length > 0 ? ['', 'Already found:', ...known] : []),
          ),
          readOnly: true,
          modelHint: 'balanced',
          outputSchema: ROUND_SCHEMA,
          constraints: ['Read-only: do not modify files or any other state.'],
        })
      );
      if (task === null) {
        const failure = failureOf(wf, `round-${round}`);
        failures.push(failure);
        rounds.push({ round, status: 'failed', newFindings: 0, reason: failure.reason });
        stopReason = 'round-failed';
        break;
      }
      const fresh = newFindings(findings, task, round);
      findings.push(...fresh);
      rounds.push({ round, status: 'completed', taskId: task.taskId, newFindings: fresh.length });
      wf.log({ message: `round ${round}: ${fresh.length} new finding(s)`, data: { round } });
      if (fresh.length === 0) {
        stopReason = 'no-new-findings';
        break;
      }
    }
  });

  const summary = await wf.phase('synthesize', async () => {
    if (findings.length === 0) {
      return stopReason === 'round-failed'
        ? 'The first round failed, so there are no findings.'
        : 'No findings: the first round found nothing to report.';
    }
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [synthesis] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: { request, findings, rounds: rounds.length, stopReason },
          rubric: lines(
            'Write the converged result of the investigation.',
            'Group related findings, rank them by importance, and say how the investigation ended',
            '(converged with no new findings, hit the round cap, or stopped on a failed round)',
            'and what that means for how complete the result is.',
          ),
        }),
    ]);
    if (synthesis && typeof synthesis.text === 'string' && synthesis.text.trim() !== '') {
      return synthesis.text;
    }
    failures.push(failureOf(wf, 'synthesis'));
    return findings.map((f) => `- [round ${f.round}] ${f.title}: ${f.detail}`).join('\n');
  });

  return {
    summary,
    findings,
    rounds,
    stopReason,
    converged: stopReason === 'no-new-findings',
    degraded: failures.length > 0,
    failures,
  };
}

/**
 * Findings of this round whose normalized title was not seen before (also within the round).
 * @param {Finding[]} known
 * @param {TaskResult<Round>} task
 * @param {number} round
 * @returns {Finding[]}
 */
function newFindings(known, task, round) {
  const seen = new Set(known.map((f) => normalize(f.title)));
  const s = task.structured;
  const reported = s && Array.isArray(s.findings) ? s.findings : [];
  const fresh = [];
  for (const f of reported) {
    if (!f || typeof f.title !== 'string') continue;
    const key = normalize(f.title);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    fresh.push({
      title: f.title.trim(),
      detail: typeof f.detail === 'string' ? f.detail : '',
      round,
      taskId: task.taskId,
    });
  }
  return fresh;
}

/** @param {string} text */
function normalize(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/**
 * An integer arg clamped to [min, max], or the fallback when it is not an integer.
 * @param {unknown} value
 * @param {number} min
 * @param {number} max
 * @param {number} fallback
 */
function clampInt(value, min, max, fallback) {
  if (typeof value !== 'number' || !Number.isInteger(value)) return fallback;
  return Math.min(max, Math.max(min, value));
}

/**
 * Why the child just failed (wf.lastFailure keeps failure reasons visible).
 * @param {WorkflowApi<unknown>} wf
 * @param {string} name
 */
function failureOf(wf, name) {
  const last = wf.lastFailure();
  return {
    name,
    taskId: last?.taskId ?? null,
    reason: last ? `${last.error.code}: ${last.error.message}` : 'failed without a reason',
  };
}

/**
 * Joins prompt lines, leaving out the ones given as null.
 * @param {(string | null)[]} parts
 */
function lines(...parts) {
  return parts.filter((part) => part !== null).join('\n');
}
