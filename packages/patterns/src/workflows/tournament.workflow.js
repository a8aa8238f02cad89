// tournament: contestants with different stances answer the same request, then every pair is
// judged head to head; the standings (a win is 1 point, a tie 0.5) pick the winner.
// Agents: contestants (default 3, at most 4) + one judge per pair (3, at most 6); at most 3 at a time.

/** @type {{ name: string, brief: string, tier: WorkflowModelHint }[]} */
const STANCES = [
  {
    name: 'conservative',
    brief: 'Prefer the safest, most proven answer; avoid anything you cannot justify.',
    tier: 'balanced',
  },
  {
    name: 'inventive',
    brief: 'Look for a better answer than the obvious one; take reasoned risks.',
    tier: 'balanced',
  },
  {
    name: 'risk-first',
    brief: 'Start from what could go wrong and build the answer that survives it.',
    tier: 'deep',
  },
  {
    name: 'pragmatic',
    brief: 'Give the answer that is cheapest to carry out and good enough.',
    tier: 'balanced',
  },
];
const DEFAULT_CONTESTANTS = 3;
const CONCURRENCY = 3;

/** @type {JsonSchemaObject} */
const JUDGEMENT_SCHEMA = {
  type: 'object',
  properties: {
    winner: { type: 'string', enum: ['A', 'B', 'tie'] },
    reason: { type: 'string' },
  },
  required: ['winner', 'reason'],
  additionalProperties: false,
};

const READ_ONLY = ['Read-only: do not modify files or any other state.'];

/**
 * @typedef {{ request: string, contestants?: number, criteria?: string[] }} Args
 * @typedef {{ winner: 'A' | 'B' | 'tie', reason: string }} Judgement
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const request = args.request;
  const count = clampInt(args.contestants, 2, STANCES.length, DEFAULT_CONTESTANTS);
  const criteria = Array.isArray(args.criteria) ? args.criteria : [];
  const failures = [];

  const entries = await wf.phase('compete', async () => {
    const stances = STANCES.slice(0, count);
    const settled = await wf.parallel(
      stances.map((stance) => async () => {
        const task = await wf.runAgent({
          name: `contestant-${stance.name}`,
          prompt: lines(
            `Answer the request below. Your stance: ${stance.name}. ${stance.brief}`,
            'Your answer will be compared head to head with answers taking other stances.',
            '',
            `Request: ${request}`,
            criteria.length > 0 ? `Answers are judged on: ${criteria.join('; ')}` : null,
          ),
          readOnly: true,
          modelHint: stance.tier,
          constraints: READ_ONLY,
        });
        if (task === null) {
          failures.push(failureOf(wf, `contestant-${stance.name}`));
          return null;
        }
        return { stance: stance.name, taskId: task.taskId, text: task.finalText };
      }),
      { concurrency: CONCURRENCY },
    );
    return settled.filter((entry, i) => {
      // null without a recorded failure: the thunk itself threw an ordinary error.
      if (entry === null && !failures.some((f) => f.name === `contestant-${stances[i].name}`)) {
        failures.push({
          name: `contestant-${stances[i].name}`,
          taskId: null,
          reason: 'threw an error',
        });
      }
      return entry !== null;
    });
  });

  const matches = await wf.phase('judge', async () => {
    const pairs = [];
    for (let i = 0; i < entries.length; i += 1) {
      for (let j = i + 1; j < entries.length; j += 1) pairs.push([entries[i], entries[j]]);
    }
    const settled = await wf.parallel(
      pairs.map((pair, k) => async () => {
        // Alternate which contestant is shown first, so position bias does not favour one stance.
        const [a, b] = k % 2 === 0 ? pair : [pair[1], pair[0]];
        const name = `judge-${a.stance}-vs-${b.stance}`;
        const task = /** @type {TaskResult<Judgement> | null} */ (
          await wf.runAgent({
            name,
            prompt: lines(
              'Judge which answer serves the request better. Say A, B or tie, with a reason.',
              criteria.length > 0
                ? `Judge on: ${criteria.join('; ')}`
                : 'Judge on correctness first, then usefulness, then clarity.',
              '',
              `Request: ${request}`,
              '',
              'Answer A:',
              a.text,
              '',
              'Answer B:',
              b.text,
            ),
            readOnly: true,
            modelHint: 'balanced',
            outputSchema: JUDGEMENT_SCHEMA,
            constraints: READ_ONLY,
            evidenceRefs: [`task_id:${a.taskId}`, `task_id:${b.taskId}`],
          })
        );
        if (task === null) {
          failures.push(failureOf(wf, name));
          return { a: a.stance, b: b.stance, status: 'unjudged', winner: null, reason: '' };
        }
        const s = task.structured;
        const verdict = s?.winner === 'A' ? a.stance : s?.winner === 'B' ? b.stance : 'tie';
        return {
          a: a.stance,
          b: b.stance,
          status: 'judged',
          winner: verdict,
          reason: typeof s?.reason === 'string' ? s.reason : String(task.finalText || ''),
          taskId: task.taskId,
        };
      }),
      { concurrency: CONCURRENCY },
    );
    return settled.map((m, k) => {
      if (m) return m;
      const [a, b] = pairs[k];
      failures.push({
        name: `judge-${a.stance}-vs-${b.stance}`,
        taskId: null,
        reason: 'threw an error',
      });
      return { a: a.stance, b: b.stance, status: 'unjudged', winner: null, reason: '' };
    });
  });

  const standings = rank(entries, matches);
  const top = standings[0] || null;
  const winner = top ? entries.find((e) => e.stance === top.stance) : null;
  const unjudged = matches.filter((m) => m.status !== 'judged').length;

  let summary;
  if (!winner) summary = 'No contestant produced an answer, so there is no winner.';
  else {
    const tally = standings.map((s) => `${s.stance} ${s.points}`).join(', ');
    const reasons = matches
      .filter((m) => m.status === 'judged' && m.winner === winner.stance)
      .map((m) => `- beat ${m.a === winner.stance ? m.b : m.a}: ${m.reason}`);
    summary = lines(
      `Winner: ${winner.stance} (points: ${tally}${unjudged > 0 ? `; ${unjudged} match(es) unjudged` : ''}).`,
      ...reasons,
      '',
      winner.text,
    );
  }
  return { summary, winner, standings, matches, degraded: failures.length > 0, failures };
}

/** Points, then wins, then stance order: a total, deterministic order. */
function rank(entries, matches) {
  const table = entries.map((e, order) => ({
    stance: e.stance,
    points: 0,
    wins: 0,
    ties: 0,
    losses: 0,
    order,
  }));
  const row = (stance) => table.find((t) => t.stance === stance);
  for (const m of matches) {
    if (m.status !== 'judged') continue;
    if (m.winner === 'tie') {
      row(m.a).ties += 1;
      row(m.b).ties += 1;
      row(m.a).points += 0.5;
      row(m.b).points += 0.5;
    } else {
      const loser = m.winner === m.a ? m.b : m.a;
      row(m.winner).wins += 1;
      row(m.winner).points += 1;
      row(loser).losses += 1;
    }
  }
  return table
    .sort((x, y) => y.points - x.points || y.wins - x.wins || x.order - y.order)
    .map((t) => ({
      stance: t.stance,
      points: t.points,
      wins: t.wins,
      ties: t.ties,
      losses: t.losses,
    }));
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
