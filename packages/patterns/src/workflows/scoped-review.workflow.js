// scoped-review (built-in): reviews a change given as review packets (from buildReviewPackets).
// Per packet a primary reviewer (plus a deep second reviewer for high-risk packets) reports
// findings; findings merge by a deterministic id with the highest severity winning; verifiers
// give every finding exactly one disposition; an audit artifact records it all; a final
// synthesis writes the review. Agents: reviewers (at most 60) + verifiers (at most 3) + synthesis.

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];
const BLOCKING = ['critical', 'high', 'medium'];
const DISPOSITIONS = ['confirmed', 'refuted', 'unresolved'];
const CATEGORIES = [
  'correctness',
  'security',
  'performance',
  'reliability',
  'maintainability',
  'tests',
  'docs',
];
const MAX_AGENTS = 64;
const CONCURRENCY = 4;
const VERIFY_BATCH = 30;
const MAX_VERIFIERS = 3;
const MAX_REVIEWERS = MAX_AGENTS - MAX_VERIFIERS - 1;
const MAX_VERIFIER_DIFF_CHARS = 120000;

/** @type {JsonSchemaObject} */
const REVIEW_SCHEMA = {
  type: 'object',
  properties: {
    findings: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          file: { type: 'string' },
          line: { type: 'integer', minimum: 0 },
          severity: { type: 'string', enum: SEVERITIES },
          category: { type: 'string', enum: CATEGORIES },
          title: { type: 'string' },
          detail: { type: 'string' },
          suggestion: { type: 'string' },
        },
        required: ['file', 'line', 'severity', 'category', 'title', 'detail', 'suggestion'],
        additionalProperties: false,
      },
    },
    summary: { type: 'string' },
  },
  required: ['findings', 'summary'],
  additionalProperties: false,
};

/** @type {JsonSchemaObject} */
const DISPOSITION_SCHEMA = {
  type: 'object',
  properties: {
    dispositions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          disposition: { type: 'string', enum: DISPOSITIONS },
          reason: { type: 'string' },
          severity: { type: 'string', enum: SEVERITIES },
        },
        required: ['id', 'disposition', 'reason'],
        additionalProperties: false,
      },
    },
  },
  required: ['dispositions'],
  additionalProperties: false,
};

const SEVERITY_GUIDE =
  'Severity: critical = exploitable, data loss or outage; high = wrong behaviour in normal use; medium = wrong in edge cases or a maintenance trap; low = minor; info = a note, nothing to fix.';

/**
 * @typedef {{ id: string, diff: string, files: { path: string, oldPath?: string, change?: string }[], rangeId?: string, partition?: string, risk?: string, riskReasons?: string[], chunk?: { index: number, count: number } }} PacketInput
 * @typedef {{ packets?: PacketInput[], packetFiles?: string[], request?: string, requirements?: string[], testEvidence?: string, maxReviewers?: number }} Args
 * @typedef {{ file: string, line: number, severity: string, category: string, title: string, detail: string, suggestion: string }} ReportedFinding
 * @typedef {{ findings: ReportedFinding[], summary: string }} Review
 * @typedef {{ dispositions: { id: string, disposition: string, reason: string, severity?: string }[] }} Dispositions
 */

/**
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function run(wf, args) {
  const packets = await loadPackets(wf, args);
  const context = reviewContext(args);
  const failures = [];
  const plan = planReviewers(packets, clampInt(args.maxReviewers, 1, MAX_REVIEWERS, MAX_REVIEWERS));

  const reviews = await wf.phase('primary-review', async () => {
    const settled = await wf.parallel(
      plan.assignments.map((a) => () => review(wf, a, context, failures)),
      { concurrency: CONCURRENCY },
    );
    return settled.map((r, i) => {
      if (r) return r;
      const a = plan.assignments[i];
      failures.push({ name: reviewerName(a), taskId: null, reason: 'threw an error' });
      return {
        assignment: a,
        status: 'failed',
        findings: [],
        outOfScope: [],
        reason: 'threw an error',
      };
    });
  });

  const merged = mergeFindings(reviews);

  const verification = await wf.phase('verification', async () => {
    const checked = merged.slice(0, VERIFY_BATCH * MAX_VERIFIERS);
    const overflow = merged.slice(checked.length).map((f) => ({
      ...f,
      disposition: 'unresolved',
      dispositionReason: `not verified: over the cap of ${checked.length} verified findings`,
      verifiedBy: null,
    }));
    const batches = [];
    for (let i = 0; i < checked.length; i += VERIFY_BATCH)
      batches.push(checked.slice(i, i + VERIFY_BATCH));
    const settled = await wf.parallel(
      batches.map((batch, k) => () => verify(wf, batch, k + 1, packets, context, failures)),
      { concurrency: CONCURRENCY },
    );
    const verifiers = [];
    const anomalies = [];
    const findings = [];
    settled.forEach((outcome, k) => {
      const result = outcome || {
        verifier: {
          name: `verifier-${k + 1}`,
          status: 'failed',
          taskId: null,
          reason: 'threw an error',
        },
        structured: null,
      };
      if (!outcome)
        failures.push({ name: `verifier-${k + 1}`, taskId: null, reason: 'threw an error' });
      verifiers.push({ ...result.verifier, findings: batches[k].map((f) => f.id) });
      const applied = applyDispositions(batches[k], result);
      anomalies.push(...applied.anomalies);
      findings.push(...applied.findings);
    });
    return { findings: findings.concat(overflow), verifiers, anomalies };
  });

  const findings = sortFindings(verification.findings);
  const coverage = coverageOf(packets, plan, reviews);
  const actionable = findings.filter((f) => f.disposition !== 'refuted' && f.severity !== 'info');
  const verdict = findings.some(
    (f) => f.disposition === 'confirmed' && BLOCKING.includes(f.severity),
  )
    ? 'changes-requested'
    : coverage.complete &&
        !findings.some((f) => f.disposition === 'unresolved' && BLOCKING.includes(f.severity))
      ? 'approve'
      : 'inconclusive';

  const audit = await wf.phase('audit', async () => {
    const record = {
      rangeIds: distinct(packets.map((p) => p.rangeId).filter((r) => typeof r === 'string')),
      verdict,
      packets: packets.map((p) => ({
        id: p.id,
        partition: p.partition,
        risk: p.risk,
        files: p.files.map((f) => f.path),
        reviewers: reviews
          .filter((r) => r.assignment.packet.id === p.id)
          .map((r) => ({
            role: r.assignment.role,
            taskId: r.taskId || null,
            status: r.status,
            findings: r.findings.length,
            reason: r.reason || null,
          })),
      })),
      coverage,
      findings,
      outOfScope: reviews.flatMap((r) => r.outOfScope),
      verifiers: verification.verifiers,
      verifierAnomalies: verification.anomalies,
      failures,
    };
    // A one-item wf.parallel: a failed write becomes null instead of failing the run.
    const [written] = await wf.parallel([() => wf.artifact('scoped-review-audit', record)]);
    if (!written) failures.push(failureOf(wf, 'audit-artifact'));
    return written || null;
  });

  const summary = await wf.phase('final-synthesis', async () => {
    // A one-item wf.parallel: a failed synthesis becomes null instead of failing the run.
    const [synthesis] = await wf.parallel([
      () =>
        wf.synthesize({
          inputs: {
            request: context.request,
            verdict,
            findings: actionable.map((f) => ({
              id: f.id,
              where: `${f.file}:${f.line}`,
              severity: f.severity,
              disposition: f.disposition,
              title: f.title,
              detail: f.detail,
              suggestion: f.suggestion,
              dispositionReason: f.dispositionReason,
            })),
            refuted: findings.filter((f) => f.disposition === 'refuted').length,
            coverage,
          },
          rubric: [
            `Write the review for the author of the change. Open with the verdict: ${verdict}.`,
            'Then the confirmed findings by severity, each with file:line and the fix;',
            'then the unresolved ones and what would settle each; mention refuted findings only as a count.',
            'End with coverage gaps (unreviewed packets, failed reviewers), if any. Do not add findings.',
          ].join('\n'),
        }),
    ]);
    if (synthesis && typeof synthesis.text === 'string' && synthesis.text.trim() !== '') {
      return synthesis.text;
    }
    failures.push(failureOf(wf, 'final-synthesis'));
    return localSummary(verdict, actionable, findings, coverage);
  });

  const count = (d) => findings.filter((f) => f.disposition === d).length;
  const bySeverity = {};
  for (const s of SEVERITIES) bySeverity[s] = actionable.filter((f) => f.severity === s).length;
  return {
    summary,
    verdict,
    // Only a complete, clean review may be reported as an approval without qualification.
    unqualifiedApprovalAllowed:
      verdict === 'approve' && actionable.length === 0 && failures.length === 0,
    findings,
    counts: {
      total: findings.length,
      confirmed: count('confirmed'),
      refuted: count('refuted'),
      unresolved: count('unresolved'),
      bySeverity,
    },
    coverage,
    audit,
    degraded: failures.length > 0 || !coverage.complete,
    failures,
  };
}

/**
 * Packets from args.packets and/or args.packetFiles (JSON files written by writeReviewPackets).
 * @param {WorkflowApi<Args>} wf
 * @param {Args} args
 */
async function loadPackets(wf, args) {
  const raw = (Array.isArray(args.packets) ? args.packets : []).map((value, i) => ({
    value,
    where: `packets[${i}]`,
  }));
  const files = Array.isArray(args.packetFiles) ? args.packetFiles : [];
  for (const path of files) {
    const text = await wf.readFile(path);
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error(`scoped-review: packet file ${path} is not JSON`);
    }
    raw.push({ value, where: `packet file ${path}` });
  }
  if (raw.length === 0) {
    throw new Error(
      'scoped-review: give the change as args.packets or args.packetFiles (from buildReviewPackets)',
    );
  }
  const seen = new Set();
  const packets = [];
  for (const { value: p, where } of raw) {
    if (!p || typeof p !== 'object')
      throw new Error(`scoped-review: ${where} must be a packet object`);
    if (typeof p.id !== 'string' || p.id === '')
      throw new Error(`scoped-review: ${where}.id must be a non-empty string`);
    if (typeof p.diff !== 'string')
      throw new Error(`scoped-review: ${where}.diff must be a string`);
    if (!Array.isArray(p.files) || p.files.some((f) => !f || typeof f.path !== 'string')) {
      throw new Error(`scoped-review: ${where}.files must be a list of { path }`);
    }
    // Content-addressed: the same packet given twice is reviewed once.
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    packets.push({
      id: p.id,
      rangeId: typeof p.rangeId === 'string' ? p.rangeId : null,
      partition: typeof p.partition === 'string' ? p.partition : 'change',
      risk: p.risk === 'high' ? 'high' : 'normal',
      riskReasons: Array.isArray(p.riskReasons)
        ? p.riskReasons.filter((r) => typeof r === 'string')
        : [],
      files: p.files.map((f) => ({
        path: f.path,
        oldPath: typeof f.oldPath === 'string' ? f.oldPath : null,
        change: f.change || 'modified',
      })),
      chunk: p.chunk && typeof p.chunk.index === 'number' ? p.chunk : null,
      diff: p.diff,
    });
  }
  return packets;
}

function reviewContext(args) {
  return {
    request: typeof args.request === 'string' ? args.request : 'Review this change.',
    requirements: Array.isArray(args.requirements)
      ? args.requirements.filter((r) => typeof r === 'string')
      : [],
    testEvidence: typeof args.testEvidence === 'string' ? args.testEvidence : '',
  };
}

/** Primaries for every packet first (high-risk packets first), then deep seconds, up to the cap. */
function planReviewers(packets, cap) {
  const ordered = packets
    .filter((p) => p.risk === 'high')
    .concat(packets.filter((p) => p.risk !== 'high'));
  const wanted = ordered
    .map((packet) => ({ packet, role: 'primary', tier: 'balanced' }))
    .concat(
      ordered
        .filter((p) => p.risk === 'high')
        .map((packet) => ({ packet, role: 'deep', tier: 'deep' })),
    );
  const assignments = wanted.slice(0, cap);
  const planned = (id, role) => assignments.some((a) => a.packet.id === id && a.role === role);
  return {
    assignments,
    unreviewed: packets.filter((p) => !planned(p.id, 'primary')).map((p) => p.id),
    missingDeep: packets
      .filter((p) => p.risk === 'high' && !planned(p.id, 'deep'))
      .map((p) => p.id),
  };
}

function reviewerName(a) {
  return `review-${a.role}-${a.packet.id}`;
}

/** @param {WorkflowApi<Args>} wf */
async function review(wf, assignment, context, failures) {
  const p = assignment.packet;
  const name = reviewerName(assignment);
  const paths = p.files.map((f) => f.path);
  const task = /** @type {TaskResult<Review> | null} */ (
    await wf.runAgent({
      name,
      prompt: [
        `You are the ${assignment.role === 'deep' ? 'second, in-depth' : 'primary'} reviewer of one packet of a change.`,
        `Packet ${p.id}: ${p.partition}${p.chunk ? ` (part ${p.chunk.index} of ${p.chunk.count} of one file)` : ''}, risk ${p.risk}${p.riskReasons.length > 0 ? ` (${p.riskReasons.join('; ')})` : ''}.`,
        `Files: ${p.files.map((f) => (f.oldPath ? `${f.oldPath} -> ${f.path}` : f.path) + ` (${f.change})`).join(', ')}`,
        '',
        'Read contract: report findings only on what this diff adds, removes or changes. You may read the',
        'files it touches and what they use, for context only. Cite the file path exactly as listed above and',
        'the line number in the new file (0 for the file as a whole). Return an empty list when you find nothing.',
        SEVERITY_GUIDE,
        '',
        `What the change is for: ${context.request}`,
        context.requirements.length > 0
          ? `Requirements it must meet:\n${context.requirements.map((r) => `- ${r}`).join('\n')}`
          : null,
        context.testEvidence
          ? `Test evidence supplied with the change:\n${context.testEvidence}`
          : null,
        '',
        'Diff:',
        p.diff,
      ]
        .filter((line) => line !== null)
        .join('\n'),
      readOnly: true,
      modelHint: assignment.tier,
      outputSchema: REVIEW_SCHEMA,
      scopeSummary: `${p.partition}: ${paths.slice(0, 10).join(', ')}${paths.length > 10 ? ', ...' : ''}`,
      constraints: [
        'Read-only: do not modify files or any other state.',
        'Report only findings on this packet.',
      ],
      evidenceRefs: [`diff:${p.id}`, ...paths.slice(0, 20).map((path) => `file:${path}`)],
    })
  );
  if (task === null) {
    const failure = failureOf(wf, name);
    failures.push(failure);
    return { assignment, status: 'failed', findings: [], outOfScope: [], reason: failure.reason };
  }
  const reported =
    task.structured && Array.isArray(task.structured.findings) ? task.structured.findings : [];
  const inPacket = new Set(paths.concat(p.files.map((f) => f.oldPath).filter((x) => x)));
  const findings = [];
  const outOfScope = [];
  for (const f of reported) {
    if (!f || typeof f.title !== 'string' || f.title.trim() === '') continue;
    const finding = {
      file: typeof f.file === 'string' ? f.file : '',
      line: typeof f.line === 'number' && Number.isInteger(f.line) && f.line >= 0 ? f.line : 0,
      severity: SEVERITIES.includes(f.severity) ? f.severity : 'medium',
      category: CATEGORIES.includes(f.category) ? f.category : 'correctness',
      title: f.title.trim(),
      detail: typeof f.detail === 'string' ? f.detail : '',
      suggestion: typeof f.suggestion === 'string' ? f.suggestion : '',
    };
    // The read contract: a finding on a file outside the packet is recorded, not merged.
    if (inPacket.has(finding.file)) findings.push(finding);
    else outOfScope.push({ ...finding, packetId: p.id, taskId: task.taskId });
  }
  return {
    assignment,
    status: 'completed',
    taskId: task.taskId,
    findings,
    outOfScope,
    summary:
      task.structured && typeof task.structured.summary === 'string' ? task.structured.summary : '',
  };
}

/** Merges by id (file, line, normalized title); the highest severity wins and keeps its wording. */
function mergeFindings(reviews) {
  const byId = new Map();
  for (const r of reviews) {
    for (const f of r.findings) {
      const id = findingId(f);
      const report = {
        taskId: r.taskId,
        packetId: r.assignment.packet.id,
        role: r.assignment.role,
        severity: f.severity,
      };
      const known = byId.get(id);
      if (!known) {
        byId.set(id, { id, ...f, packetIds: [report.packetId], reports: [report] });
        continue;
      }
      known.reports.push(report);
      if (!known.packetIds.includes(report.packetId)) known.packetIds.push(report.packetId);
      if (rankOf(f.severity) < rankOf(known.severity)) {
        known.severity = f.severity;
        known.title = f.title;
        known.category = f.category;
        known.detail = f.detail;
        known.suggestion = f.suggestion;
      }
    }
  }
  return sortFindings([...byId.values()]);
}

/** @param {WorkflowApi<Args>} wf */
async function verify(wf, batch, number, packets, context, failures) {
  const name = `verifier-${number}`;
  const involved = packets.filter((p) => batch.some((f) => f.packetIds.includes(p.id)));
  let budget = MAX_VERIFIER_DIFF_CHARS;
  const diffs = [];
  for (const p of involved) {
    const text =
      p.diff.length <= budget ? p.diff : `${p.diff.slice(0, Math.max(0, budget))}\n[diff clipped]`;
    budget -= text.length;
    diffs.push(`Packet ${p.id} (${p.partition}):\n${text}`);
    if (budget <= 0) break;
  }
  const task = /** @type {TaskResult<Dispositions> | null} */ (
    await wf.runAgent({
      name,
      prompt: [
        'You verify code-review findings. Give EVERY finding below exactly one disposition:',
        'confirmed (the problem is real as described), refuted (it is not a problem; say why),',
        'or unresolved (the evidence cannot settle it; say what would). Check each against the diff and',
        'the files it touches. Change a severity only when you give the reason; otherwise leave it out.',
        SEVERITY_GUIDE,
        '',
        `What the change is for: ${context.request}`,
        '',
        'Findings:',
        ...batch.map(
          (f) =>
            `${f.id} | ${f.file}:${f.line} | ${f.severity} | ${f.title}\n  ${f.detail}${f.suggestion ? `\n  suggested fix: ${f.suggestion}` : ''}`,
        ),
        '',
        ...diffs,
      ].join('\n'),
      readOnly: true,
      modelHint: 'deep',
      outputSchema: DISPOSITION_SCHEMA,
      constraints: [
        'Read-only: do not modify files or any other state.',
        'One disposition per finding id.',
      ],
      evidenceRefs: batch.map((f) => `finding:${f.id}`),
    })
  );
  if (task === null) {
    const failure = failureOf(wf, name);
    failures.push(failure);
    return {
      verifier: { name, status: 'failed', taskId: null, reason: failure.reason },
      structured: null,
    };
  }
  return {
    verifier: { name, status: 'completed', taskId: task.taskId },
    structured: task.structured,
  };
}

/**
 * Exactly one disposition per finding: the first valid one for an id counts; repeats and unknown
 * ids are anomalies; a finding left without one is unresolved. A severity changes only with a reason.
 */
function applyDispositions(batch, result) {
  const ids = new Set(batch.map((f) => f.id));
  const chosen = new Map();
  const anomalies = [];
  const list =
    result.structured && Array.isArray(result.structured.dispositions)
      ? result.structured.dispositions
      : [];
  for (const d of list) {
    if (!d || !ids.has(d.id)) {
      anomalies.push({
        verifier: result.verifier.name,
        kind: 'unknown-id',
        id: d && typeof d.id === 'string' ? d.id : null,
      });
    } else if (!DISPOSITIONS.includes(d.disposition)) {
      anomalies.push({ verifier: result.verifier.name, kind: 'invalid-disposition', id: d.id });
    } else if (chosen.has(d.id)) {
      anomalies.push({
        verifier: result.verifier.name,
        kind: 'duplicate',
        id: d.id,
        ignored: d.disposition,
      });
    } else {
      chosen.set(d.id, d);
    }
  }
  const findings = batch.map((f) => {
    const d = chosen.get(f.id);
    if (!d) {
      return {
        ...f,
        disposition: 'unresolved',
        dispositionReason:
          result.verifier.status === 'completed'
            ? 'the verifier gave no disposition'
            : `the verifier failed: ${result.verifier.reason}`,
        verifiedBy: result.verifier.taskId,
      };
    }
    const reason = typeof d.reason === 'string' ? d.reason.trim() : '';
    const regraded = SEVERITIES.includes(d.severity) && d.severity !== f.severity && reason !== '';
    if (SEVERITIES.includes(d.severity) && d.severity !== f.severity && reason === '') {
      anomalies.push({
        verifier: result.verifier.name,
        kind: 'severity-change-without-reason',
        id: f.id,
      });
    }
    return {
      ...f,
      ...(regraded ? { severity: d.severity, originalSeverity: f.severity } : {}),
      disposition: d.disposition,
      dispositionReason: reason,
      verifiedBy: result.verifier.taskId,
    };
  });
  return { findings, anomalies };
}

function coverageOf(packets, plan, reviews) {
  const ok = (id, role) =>
    reviews.some(
      (r) =>
        r.assignment.packet.id === id && r.assignment.role === role && r.status === 'completed',
    );
  const unreviewed = packets.filter((p) => !ok(p.id, 'primary')).map((p) => p.id);
  const missingDeepReview = packets
    .filter((p) => p.risk === 'high' && !ok(p.id, 'deep'))
    .map((p) => p.id);
  return {
    packets: packets.length,
    reviewed: packets.length - unreviewed.length,
    unreviewed,
    notPlanned: plan.unreviewed.concat(
      plan.missingDeep.filter((id) => !plan.unreviewed.includes(id)),
    ),
    missingDeepReview,
    reviewers: {
      planned: plan.assignments.length,
      completed: reviews.filter((r) => r.status === 'completed').length,
      failed: reviews.filter((r) => r.status !== 'completed').length,
    },
    complete: unreviewed.length === 0 && missingDeepReview.length === 0,
  };
}

function localSummary(verdict, actionable, findings, coverage) {
  const refuted = findings.filter((f) => f.disposition === 'refuted').length;
  return [
    `Verdict: ${verdict} (the final synthesis failed; this summary is generated from the audit).`,
    ...actionable.map((f) => `- [${f.severity}, ${f.disposition}] ${f.file}:${f.line} ${f.title}`),
    `${refuted} finding(s) refuted.`,
    coverage.complete
      ? `All ${coverage.packets} packet(s) reviewed.`
      : `Coverage gaps: ${coverage.unreviewed.length} packet(s) unreviewed, ${coverage.missingDeepReview.length} high-risk packet(s) without a deep review.`,
  ].join('\n');
}

function sortFindings(list) {
  return list
    .slice()
    .sort(
      (a, b) =>
        rankOf(a.severity) - rankOf(b.severity) ||
        (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
        a.line - b.line ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
}

function rankOf(severity) {
  return SEVERITIES.indexOf(severity);
}

/** `F-` + 16 hex: two FNV-1a hashes of file, line and normalized title (stable across runs). */
function findingId(f) {
  const key = `${f.file}\n${f.line}\n${f.title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()}`;
  return `F-${fnv1a(key, 0)}${fnv1a(key, 0x9e3779b9)}`;
}

function fnv1a(text, seed) {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The values in first-seen order without repeats (unlike the patterns' `unique`, no trimming).
 * @template T
 * @param {T[]} values
 */
function distinct(values) {
  return values.filter((v, i) => values.indexOf(v) === i);
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
