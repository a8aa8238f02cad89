// parallel-investigation (built-in): read-only investigators take one angle each on a question
// and return structured findings; a synthesis answers the question from them.
// Agents: one per angle (default 3, at most maxAgents - 1) plus the synthesis; at most 4 at a time.

const DEFAULT_TARGETS = [
  'structure: entry points, module boundaries and control flow',
  'edge cases: error handling and failure modes',
  'tests: validation and coverage',
];
const MAX_AGENTS = 8;
const MAX_CONCURRENCY = 4;

/** @type {JsonSchemaObject} */
const FINDING_SCHEMA = {
  type: 'object',
  properties: {
    finding: { type: 'string' },
    evidence: { type: 'array', items: { type: 'string' } },
    confidence: { type: 'string', enum: ['high', 'medium', 'low'] },
  },
  required: ['finding', 'evidence', 'confidence'],
  additionalProperties: false,
};

const DEFAULT_RUBRIC =
  'Answer the question from the findings. Lead with the answer, support it with the evidence the investigators cited, note where they disagree, and list open questions and the angles that failed.';

/**
 * @typedef {{ question: string, targets?: string[], rubric?: string, maxAgents?: number, maxConcurrency?: number }} Args
 * @typedef {{ finding: string, evidence: string[], confidence: string }} Finding
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const question = args.question;
  const targets =
    Array.isArray(args.targets) && args.targets.length > 0 ? args.targets : DEFAULT_TARGETS;
  // One agent is kept for the synthesis.
  const agentCap = clampInt(args.maxAgents, 2, MAX_AGENTS, MAX_AGENTS);
  const concurrency = clampInt(args.maxConcurrency, 1, MAX_CONCURRENCY, MAX_CONCURRENCY);
  const angles = targets.slice(0, agentCap - 1);
  const failures = [];

  const investigated = await wf.phase('investigate', async () => {
    const settled = await wf.parallel(
      angles.map((angle, i) => async () => {
        const name = `investigator-${i + 1}`;
        const task = /** @type {TaskResult<Finding> | null} */ (
          await wf.runAgent({
            name,
            prompt: lines(
              'Investigate the question below from one angle only; other investigators cover the rest.',
              `Your angle: ${angle}`,
              'Read what you need, then report your finding, the evidence for it (file paths with line',
              'numbers, commands and their output, documents) and how confident you are.',
              '',
              `Question: ${question}`,
            ),
            readOnly: true,
            modelHint: 'balanced',
            outputSchema: FINDING_SCHEMA,
            scopeSummary: angle,
            constraints: ['Read-only: do not modify files or any other state.'],
          })
        );
        if (task === null) {
          const failure = failureOf(wf, name);
          failures.push(failure);
          return { angle, status: 'failed', text: '', reason: failure.reason };
        }
        const s = task.structured;
        return {
          angle,
          status: 'completed',
          text: s && typeof s.finding === 'string' ? s.finding : String(task.finalText || ''),
          evidence:
            s && Array.isArray(s.evidence) ? s.evidence.filter((e) => typeof e === 'string') : [],
          confidence: s && typeof s.confidence === 'string' ? s.confidence : 'low',
          taskId: task.taskId,
        };
      }),
      { concurrency },
    );
    return settled.map((finding, i) => {
      if (finding) return finding;
      failures.push({ name: `investigator-${i + 1}`, taskId: null, reason: 'threw an error' });
      return { angle: angles[i], status: 'failed', text: '', reason: 'threw an error' };
    });
  });

  // Angles beyond the agent cap are reported, not silently dropped.
  const skipped = targets.slice(angles.length).map((angle) => ({
    angle,
    status: 'skipped',
    text: `not investigated: over the cap of ${agentCap} agents`,
  }));
  const findings = [...investigated, ...skipped];
  const completed = investigated.filter((f) => f.status === 'completed');

  const synthesis = await wf.phase('synthesize', async () => {
    if (completed.length === 0) {
      return `No investigator returned a finding (${investigated.length} failed); the question is unanswered.`;
    }
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [result] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: {
            question,
            findings: completed.map((f) => ({
              angle: f.angle,
              finding: f.text,
              evidence: f.evidence,
              confidence: f.confidence,
            })),
            failedAngles: investigated.filter((f) => f.status === 'failed').map((f) => f.angle),
            skippedAngles: skipped.map((f) => f.angle),
          },
          rubric:
            typeof args.rubric === 'string' && args.rubric.trim() !== ''
              ? args.rubric
              : DEFAULT_RUBRIC,
        }),
    ]);
    if (result && typeof result.text === 'string' && result.text.trim() !== '') return result.text;
    failures.push(failureOf(wf, 'synthesis'));
    return completed.map((f) => `${f.angle}: ${f.text}`).join('\n\n');
  });

  return { synthesis, findings, degraded: failures.length > 0, failures };
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
