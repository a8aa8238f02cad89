// fan-out-and-synthesize: independent angles on one request run in parallel, then a synthesis
// merges them, removes duplicates and resolves conflicts.
// Agents: one per angle (default 4, at most 5) plus the synthesis; at most 4 at a time.

const DEFAULT_ANGLES = ['scope', 'evidence', 'risk', 'recommendation'];
const DEFAULT_DEEP_ANGLES = ['risk'];
const MAX_ANGLES = 5;
const CONCURRENCY = 4;

// What each default angle looks at; other angle names are taken as their own brief.
/** @type {Record<string, string>} */
const BRIEFS = {
  scope:
    'Map the scope: what the request touches, what it does not, and the boundaries and assumptions that matter.',
  evidence:
    'Collect the evidence: the concrete facts, files, data and prior decisions that bear on the request, each with where it comes from.',
  risk: 'Find the risks: what could go wrong, how likely and how bad each is, and what would detect or prevent it.',
  recommendation:
    'Recommend a course of action: the option you would take, the alternatives you rejected and why.',
};

/**
 * @typedef {{ request: string, angles?: string[], deepAngles?: string[] }} Args
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const request = args.request;
  const requested =
    Array.isArray(args.angles) && args.angles.length > 0 ? args.angles : DEFAULT_ANGLES;
  const angles = unique(requested).slice(0, MAX_ANGLES);
  if (angles.length < unique(requested).length) {
    wf.log(`fan-out-and-synthesize: only the first ${MAX_ANGLES} angles are used`);
  }
  const deep = Array.isArray(args.deepAngles) ? args.deepAngles : DEFAULT_DEEP_ANGLES;
  const failures = [];

  const results = await wf.phase('fan-out', async () => {
    const settled = await wf.parallel(
      angles.map((angle) => async () => {
        const task = await wf.runAgent({
          name: `angle-${slug(angle)}`,
          prompt: lines(
            `You are one of ${angles.length} independent analysts, each taking one angle on the same request.`,
            `Your angle: ${angle}. ${BRIEFS[angle] || ''}`,
            'Stay on your angle; the others are covered. Be concrete and cite sources (file paths, documents).',
            '',
            `Request: ${request}`,
          ),
          readOnly: true,
          modelHint: deep.includes(angle) ? 'deep' : 'balanced',
          constraints: ['Read-only: do not modify files or any other state.'],
        });
        if (task === null) {
          const failure = failureOf(wf, `angle-${slug(angle)}`);
          failures.push(failure);
          return { angle, status: 'failed', reason: failure.reason };
        }
        return { angle, status: 'completed', taskId: task.taskId, text: task.finalText };
      }),
      { concurrency: CONCURRENCY },
    );
    // A thunk that threw an ordinary error comes back as null.
    return settled.map((r, i) => {
      if (r) return r;
      const reason = 'the angle threw an error';
      failures.push({ name: `angle-${slug(angles[i])}`, taskId: null, reason });
      return { angle: angles[i], status: 'failed', reason };
    });
  });

  const completed = results.filter((r) => r.status === 'completed');
  const summary = await wf.phase('synthesize', async () => {
    if (completed.length === 0) {
      return `No angle produced a result (${results.length} failed), so there is nothing to synthesize.`;
    }
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [synthesis] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: {
            request,
            angles: completed.map((r) => ({ angle: r.angle, text: r.text })),
            missingAngles: results.filter((r) => r.status !== 'completed').map((r) => r.angle),
          },
          rubric: lines(
            'Merge the angles into one answer to the request.',
            'Remove duplicates, keep each point once with the angle(s) that raised it,',
            'resolve conflicts explicitly (say which view you keep and why), and rank by importance.',
            'Name any missing angle as a gap in the analysis.',
          ),
        }),
    ]);
    if (synthesis && typeof synthesis.text === 'string' && synthesis.text.trim() !== '') {
      return synthesis.text;
    }
    failures.push(failureOf(wf, 'synthesis'));
    return completed.map((r) => `## ${r.angle}\n${r.text}`).join('\n\n');
  });

  return { summary, angles: results, degraded: failures.length > 0, failures };
}

/** @param {unknown[]} values */
function unique(values) {
  const out = [];
  for (const v of values) {
    const text = String(v).trim();
    if (text !== '' && !out.includes(text)) out.push(text);
  }
  return out;
}

/** @param {string} text */
function slug(text) {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'angle'
  );
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
