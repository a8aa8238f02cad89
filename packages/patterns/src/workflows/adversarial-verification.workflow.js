// adversarial-verification: a candidate answer, a verifier that tries to falsify it, then a
// corrected answer that keeps what survived and states the caveats.
// Agents: 3 (candidate, verifier, synthesis), one at a time. Read-only throughout.

const VERDICTS = ['holds', 'partly-holds', 'falsified', 'inconclusive'];
const SEVERITIES = ['critical', 'major', 'minor'];

/** @type {JsonSchemaObject} */
const VERIFICATION_SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: VERDICTS },
    objections: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          claim: { type: 'string' },
          problem: { type: 'string' },
          severity: { type: 'string', enum: SEVERITIES },
        },
        required: ['claim', 'problem', 'severity'],
        additionalProperties: false,
      },
    },
    caveats: { type: 'array', items: { type: 'string' } },
  },
  required: ['verdict', 'objections', 'caveats'],
  additionalProperties: false,
};

const READ_ONLY = ['Read-only: do not modify files or any other state.'];

/**
 * @typedef {{ request: string, criteria?: string[] }} Args
 * @typedef {{ claim: string, problem: string, severity: string }} Objection
 * @typedef {{ verdict: string, objections: Objection[], caveats: string[] }} Verification
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const request = args.request;
  const criteria = Array.isArray(args.criteria) ? args.criteria : [];
  const failures = [];

  const candidate = await wf.phase('candidate', async () => {
    const task = await wf.runAgent({
      name: 'candidate',
      prompt: lines(
        'Answer the request below as well as you can. State each claim so that it can be checked,',
        'and say what evidence supports it (file paths, documents, reasoning).',
        '',
        `Request: ${request}`,
        criteria.length > 0 ? `The answer must satisfy: ${criteria.join('; ')}` : null,
      ),
      readOnly: true,
      modelHint: 'deep',
      constraints: READ_ONLY,
    });
    if (task === null) {
      failures.push(failureOf(wf, 'candidate'));
      return null;
    }
    return { taskId: task.taskId, text: task.finalText };
  });

  const verification = await wf.phase('verify', async () => {
    if (candidate === null) return null;
    const task = /** @type {TaskResult<Verification> | null} */ (
      await wf.runAgent({
        name: 'falsifier',
        prompt: lines(
          'You are an adversarial verifier. Try to falsify the candidate answer below.',
          'Check every claim against evidence you can read; look for counter-examples, missing cases,',
          'wrong assumptions and unsupported steps. Report each objection with its severity,',
          'the caveats a reader must know, and a verdict: holds, partly-holds, falsified or inconclusive.',
          'Do not rewrite the answer; only judge it.',
          '',
          `Request: ${request}`,
          criteria.length > 0 ? `Criteria: ${criteria.join('; ')}` : null,
          '',
          'Candidate answer:',
          candidate.text,
        ),
        readOnly: true,
        modelHint: 'deep',
        outputSchema: VERIFICATION_SCHEMA,
        constraints: READ_ONLY,
        evidenceRefs: [`task_id:${candidate.taskId}`],
      })
    );
    if (task === null) {
      failures.push(failureOf(wf, 'falsifier'));
      return null;
    }
    return readVerification(task);
  });

  const caveats = verification ? verification.caveats.slice() : [];
  if (candidate !== null && verification === null) {
    caveats.push('The answer was not independently verified: the verifier failed.');
  }
  if (candidate === null)
    caveats.push('No candidate answer was produced, so nothing was verified.');

  const summary = await wf.phase('synthesize', async () => {
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [synthesis] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: {
            request,
            candidate: candidate ? candidate.text : null,
            verdict: verification ? verification.verdict : 'unverified',
            objections: verification ? verification.objections : [],
            caveats,
          },
          rubric: lines(
            'Write the corrected answer to the request.',
            'Keep the claims that survived verification, fix or drop the ones an objection refuted,',
            'and end with a "Caveats" section listing every caveat and any unresolved objection.',
            'If there is no candidate, answer directly and mark the whole answer as unverified.',
          ),
        }),
    ]);
    if (synthesis && typeof synthesis.text === 'string' && synthesis.text.trim() !== '') {
      return synthesis.text;
    }
    failures.push(failureOf(wf, 'synthesis'));
    if (candidate === null) return 'No answer: the candidate and the synthesis both failed.';
    return lines(candidate.text, '', 'Caveats:', ...caveats.map((c) => `- ${c}`));
  });

  return {
    summary,
    verified: verification !== null,
    verdict: verification ? verification.verdict : 'unverified',
    candidate,
    verification,
    caveats,
    degraded: failures.length > 0,
    failures,
  };
}

/**
 * The verifier's judgement, from structured output or, failing that, its text as one caveat.
 * @param {TaskResult<Verification>} task
 */
function readVerification(task) {
  const s = task.structured;
  if (s && VERDICTS.includes(s.verdict)) {
    return {
      taskId: task.taskId,
      verdict: s.verdict,
      objections: Array.isArray(s.objections)
        ? s.objections.filter((o) => o && typeof o.claim === 'string')
        : [],
      caveats: Array.isArray(s.caveats) ? s.caveats.filter((c) => typeof c === 'string') : [],
    };
  }
  return {
    taskId: task.taskId,
    verdict: 'inconclusive',
    objections: [],
    caveats: [`Verifier notes: ${String(task.finalText || '').slice(0, 2000)}`],
  };
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
