// classify-and-act: a fast classifier labels the request, a worker chosen by that label acts on
// it (citing the classifier's task as evidence), then a synthesis writes the answer.
// Agents: 3 (classifier, worker, synthesis), one at a time. Read-only throughout.

const LABELS = ['research', 'verification', 'migration', 'triage', 'creative'];
const DEFAULT_LABEL = 'research';

// The routed worker's brief and tier per label. A migration is planned here, never performed.
/** @type {Record<string, { tier: WorkflowModelHint, brief: string }>} */
const PLAYBOOKS = {
  research: {
    tier: 'balanced',
    brief:
      'Research the question. Gather the relevant facts from the workspace, cite where each one comes from (file paths, documents), and keep established facts apart from inference.',
  },
  verification: {
    tier: 'deep',
    brief:
      'Verify the claim or change. Say what would make it true or false, check each point against evidence you can read, and report every point as confirmed, refuted or unresolved.',
  },
  migration: {
    tier: 'deep',
    brief:
      'Plan the migration without performing it: the places affected, an ordered list of safe steps, the risk of each step and how to roll it back.',
  },
  triage: {
    tier: 'balanced',
    brief:
      'Triage the problem. List the likely causes ranked by likelihood and impact, and the next diagnostic step for each.',
  },
  creative: {
    tier: 'balanced',
    brief:
      'Offer three to five distinct options, each with its trade-offs, then say which one you would choose and why.',
  },
};

/** @type {JsonSchemaObject} */
const CLASSIFICATION_SCHEMA = {
  type: 'object',
  properties: {
    label: { type: 'string', enum: LABELS },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    rationale: { type: 'string' },
  },
  required: ['label', 'confidence', 'rationale'],
  additionalProperties: false,
};

const READ_ONLY = ['Read-only: do not modify files, run mutating commands or change any state.'];

/**
 * @typedef {{ request: string, context?: string }} Args
 * @typedef {{ label: string, confidence: number, rationale: string }} Classification
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const request = args.request;
  const context = typeof args.context === 'string' ? args.context : '';
  const failures = [];

  const classification = await wf.phase('classify', async () => {
    const task = /** @type {TaskResult<Classification> | null} */ (
      await wf.runAgent({
        name: 'classifier',
        prompt: lines(
          `Classify the request below into exactly one of these labels: ${LABELS.join(', ')}.`,
          'research: find out and explain; verification: check whether something is true or correct;',
          'migration: move code or data from one shape to another; triage: diagnose a problem and rank causes;',
          'creative: produce new options or designs.',
          'Return the label, your confidence from 0 to 1, and a one-sentence rationale.',
          '',
          `Request: ${request}`,
          context ? `Context: ${context}` : null,
        ),
        readOnly: true,
        modelHint: 'fast',
        outputSchema: CLASSIFICATION_SCHEMA,
        constraints: READ_ONLY,
        terseResult: true,
      })
    );
    if (task === null) {
      failures.push(failureOf(wf, 'classifier'));
      return {
        label: DEFAULT_LABEL,
        confidence: 0,
        rationale: `the classifier failed, so the request is handled as ${DEFAULT_LABEL}`,
        taskId: null,
        fallback: true,
      };
    }
    return readClassification(task);
  });

  const work = await wf.phase('act', async () => {
    const playbook = PLAYBOOKS[classification.label];
    const task = await wf.runAgent({
      name: `${classification.label}-worker`,
      prompt: lines(
        playbook.brief,
        '',
        `Request: ${request}`,
        context ? `Context: ${context}` : null,
        `The request was classified as "${classification.label}": ${classification.rationale}`,
      ),
      readOnly: true,
      modelHint: playbook.tier,
      constraints: READ_ONLY,
      // The worker cites the classification it was routed by (a task of this run).
      ...(classification.taskId ? { evidenceRefs: [`task_id:${classification.taskId}`] } : {}),
    });
    if (task === null) {
      failures.push(failureOf(wf, `${classification.label}-worker`));
      return null;
    }
    return { taskId: task.taskId, text: task.finalText };
  });

  const summary = await wf.phase('synthesize', async () => {
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [synthesis] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: {
            request,
            label: classification.label,
            classification: classification.rationale,
            work: work ? work.text : null,
            note: work
              ? null
              : 'The routed worker failed; answer from the request alone and say so.',
          },
          rubric: lines(
            `Answer the request as a ${classification.label} result.`,
            "Lead with the answer, then the supporting points from the worker's output.",
            'Keep what the worker marked uncertain marked as uncertain. Do not invent evidence.',
          ),
        }),
    ]);
    if (synthesis && typeof synthesis.text === 'string' && synthesis.text.trim() !== '') {
      return synthesis.text;
    }
    failures.push(failureOf(wf, 'synthesis'));
    return work
      ? `${classification.label} result (not synthesized):\n${work.text}`
      : `No result: the ${classification.label} worker and the synthesis both failed.`;
  });

  return {
    summary,
    label: classification.label,
    classification,
    work,
    degraded: failures.length > 0,
    failures,
  };
}

/**
 * The classifier's label, from structured output or, failing that, a label named in its text.
 * @param {TaskResult<Classification>} task
 */
function readClassification(task) {
  const s = task.structured;
  if (s && LABELS.includes(s.label)) {
    return {
      label: s.label,
      confidence: typeof s.confidence === 'number' ? s.confidence : 0,
      rationale: typeof s.rationale === 'string' ? s.rationale : '',
      taskId: task.taskId,
      fallback: false,
    };
  }
  const text = String(task.finalText || '').toLowerCase();
  const named = LABELS.find((label) => text.includes(label));
  return {
    label: named || DEFAULT_LABEL,
    confidence: 0,
    rationale: named ? 'label read from the classifier text' : 'no label found; default used',
    taskId: task.taskId,
    fallback: !named,
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
