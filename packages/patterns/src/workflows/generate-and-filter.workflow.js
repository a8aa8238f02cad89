// generate-and-filter: several generators propose ideas from different lenses, a filter removes
// duplicates and ranks what is left, then a synthesis develops the strongest.
// Agents: generators (default 4, at most 5) + filter + synthesis; at most 4 at a time.

const LENSES = [
  { name: 'conventional', brief: 'the proven, well-trodden approaches' },
  { name: 'minimal', brief: 'the smallest change that fully solves the problem' },
  { name: 'ambitious', brief: 'bolder approaches that could pay off more' },
  { name: 'contrarian', brief: 'approaches that question the framing of the request' },
  { name: 'user-first', brief: 'what the people affected would most want' },
];
const DEFAULT_GENERATORS = 4;
const DEFAULT_IDEAS = 3;
const DEFAULT_KEEP = 3;
const CONCURRENCY = 4;

/** @type {JsonSchemaObject} */
const IDEAS_SCHEMA = {
  type: 'object',
  properties: {
    ideas: {
      type: 'array',
      items: {
        type: 'object',
        properties: { title: { type: 'string' }, description: { type: 'string' } },
        required: ['title', 'description'],
        additionalProperties: false,
      },
    },
  },
  required: ['ideas'],
  additionalProperties: false,
};

/** @type {JsonSchemaObject} */
const RANKING_SCHEMA = {
  type: 'object',
  properties: {
    ranked: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          score: { type: 'number', minimum: 0, maximum: 10 },
          reason: { type: 'string' },
        },
        required: ['id', 'score', 'reason'],
        additionalProperties: false,
      },
    },
    duplicates: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, duplicateOf: { type: 'string' } },
        required: ['id', 'duplicateOf'],
        additionalProperties: false,
      },
    },
  },
  required: ['ranked', 'duplicates'],
  additionalProperties: false,
};

const READ_ONLY = ['Read-only: do not modify files or any other state.'];

/**
 * @typedef {{ request: string, generators?: number, ideasPerGenerator?: number, keep?: number, criteria?: string[] }} Args
 * @typedef {{ ideas: { title: string, description: string }[] }} Ideas
 * @typedef {{ id: string, title: string, description: string, generator: string, taskId: string }} Idea
 * @typedef {{ ranked: { id: string, score: number, reason: string }[], duplicates: { id: string, duplicateOf: string }[] }} Ranking
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const request = args.request;
  const generators = clampInt(args.generators, 1, LENSES.length, DEFAULT_GENERATORS);
  const perGenerator = clampInt(args.ideasPerGenerator, 1, 8, DEFAULT_IDEAS);
  const keep = clampInt(args.keep, 1, 10, DEFAULT_KEEP);
  const criteria = Array.isArray(args.criteria) ? args.criteria : [];
  const failures = [];

  const ideas = await wf.phase('generate', async () => {
    const lenses = LENSES.slice(0, generators);
    const batches = await wf.parallel(
      lenses.map((lens) => async () => {
        const task = /** @type {TaskResult<Ideas> | null} */ (
          await wf.runAgent({
            name: `generator-${lens.name}`,
            prompt: lines(
              `Propose ${perGenerator} distinct ideas for the request below, focusing on ${lens.brief}.`,
              'Give each idea a short title and a description of how it would work and what it costs.',
              '',
              `Request: ${request}`,
              criteria.length > 0 ? `Ideas are judged on: ${criteria.join('; ')}` : null,
            ),
            readOnly: true,
            modelHint: 'balanced',
            outputSchema: IDEAS_SCHEMA,
            constraints: READ_ONLY,
          })
        );
        if (task === null) {
          failures.push(failureOf(wf, `generator-${lens.name}`));
          return [];
        }
        return readIdeas(task, lens.name).slice(0, perGenerator);
      }),
      { concurrency: CONCURRENCY },
    );
    // Ids are assigned here, in generator order, so the filter can refer to them.
    return batches.flatMap((batch) => batch || []).map((idea, i) => ({ id: `I${i + 1}`, ...idea }));
  });

  const filtered = await wf.phase('filter', async () => {
    if (ideas.length === 0) return { ranked: [], duplicatesRemoved: 0, byFilter: false };
    const task = /** @type {TaskResult<Ranking> | null} */ (
      await wf.runAgent({
        name: 'filter',
        prompt: lines(
          'You are the filter. Below are ideas from several generators, each with an id.',
          'Mark every idea that repeats another as a duplicate of the better-worded one,',
          'then score each remaining idea from 0 to 10 against the request and criteria, with a one-line reason.',
          '',
          `Request: ${request}`,
          criteria.length > 0 ? `Criteria: ${criteria.join('; ')}` : null,
          '',
          ...ideas.map(
            (idea) => `${idea.id} [${idea.generator}] ${idea.title}: ${idea.description}`,
          ),
        ),
        readOnly: true,
        modelHint: 'deep',
        outputSchema: RANKING_SCHEMA,
        constraints: READ_ONLY,
      })
    );
    if (task === null) {
      failures.push(failureOf(wf, 'filter'));
      return localFilter(ideas);
    }
    return applyRanking(ideas, task.structured);
  });

  const strongest = filtered.ranked.slice(0, keep);
  const summary = await wf.phase('synthesize', async () => {
    if (strongest.length === 0)
      return 'No ideas were generated, so there is nothing to choose from.';
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [synthesis] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: { request, strongest, criteria },
          rubric: lines(
            'Develop the strongest ideas into a recommendation for the request.',
            'Lead with the best idea and why it wins, then the runners-up and when to prefer them.',
            "Keep each idea's id so readers can trace it.",
          ),
        }),
    ]);
    if (synthesis && typeof synthesis.text === 'string' && synthesis.text.trim() !== '') {
      return synthesis.text;
    }
    failures.push(failureOf(wf, 'synthesis'));
    return strongest
      .map((idea, i) => `${i + 1}. ${idea.title} (${idea.id}): ${idea.description}`)
      .join('\n');
  });

  return {
    summary,
    ideas: strongest,
    generated: ideas.length,
    duplicatesRemoved: filtered.duplicatesRemoved,
    rankedBy: filtered.byFilter ? 'filter' : 'fallback',
    degraded: failures.length > 0,
    failures,
  };
}

/**
 * @param {TaskResult<Ideas>} task
 * @param {string} generator
 */
function readIdeas(task, generator) {
  const s = task.structured;
  const list = s && Array.isArray(s.ideas) ? s.ideas : [];
  const ideas = list
    .filter((idea) => idea && typeof idea.title === 'string' && idea.title.trim() !== '')
    .map((idea) => ({
      title: idea.title.trim(),
      description: typeof idea.description === 'string' ? idea.description : '',
      generator,
      taskId: task.taskId,
    }));
  if (ideas.length > 0 || !task.finalText) return ideas;
  return [
    { title: `${generator} proposal`, description: task.finalText, generator, taskId: task.taskId },
  ];
}

/**
 * Applies the filter's verdict, trusting only what refers to real ids: unknown ids are ignored,
 * an idea is a duplicate only of another existing idea, and ties keep generation order.
 */
function applyRanking(ideas, structured) {
  const byId = new Map(ideas.map((idea) => [idea.id, idea]));
  const duplicates = new Set();
  const dupList = structured && Array.isArray(structured.duplicates) ? structured.duplicates : [];
  for (const d of dupList) {
    if (d && byId.has(d.id) && byId.has(d.duplicateOf) && d.id !== d.duplicateOf) {
      if (!duplicates.has(d.duplicateOf)) duplicates.add(d.id);
    }
  }
  const scores = new Map();
  const ranked = structured && Array.isArray(structured.ranked) ? structured.ranked : [];
  for (const r of ranked) {
    if (r && byId.has(r.id) && !scores.has(r.id) && typeof r.score === 'number') {
      scores.set(r.id, { score: r.score, reason: typeof r.reason === 'string' ? r.reason : '' });
    }
  }
  if (scores.size === 0) return localFilter(ideas);
  const order = ideas.map((idea) => idea.id);
  const out = ideas
    .filter((idea) => !duplicates.has(idea.id) && scores.has(idea.id))
    .map((idea) => ({ ...idea, ...scores.get(idea.id) }))
    .sort((a, b) => b.score - a.score || order.indexOf(a.id) - order.indexOf(b.id));
  return { ranked: out, duplicatesRemoved: duplicates.size, byFilter: true };
}

/** Without the filter: drop ideas whose normalized title repeats, keep generation order. */
function localFilter(ideas) {
  const seen = new Set();
  const ranked = [];
  for (const idea of ideas) {
    const key = idea.title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
    if (seen.has(key)) continue;
    seen.add(key);
    ranked.push({ ...idea, score: null, reason: 'not ranked: the filter did not run' });
  }
  return { ranked, duplicatesRemoved: ideas.length - ranked.length, byFilter: false };
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
