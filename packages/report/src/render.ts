// The run report: one self-contained HTML page (no script, no network, no external asset) that
// draws a run as a timeline. Everything taken from the run is untrusted text (agent names, the
// result, log messages come from model-written code): it is only ever emitted through `esc`, and a
// Content-Security-Policy that forbids scripts and every fetch backs that up.
import { runSpan } from '@wf/bridge/run-span';
import { duration, grouped } from './format.js';
import {
  type AgentOutcome,
  type AgentSpan,
  agentCounts,
  errorOf,
  foldRunEvents,
  isRecord,
  type PhaseSpan,
  phaseStats,
  type RunModel,
} from './run-model.js';

export interface RunReportInput {
  /** The run's snapshot (`run.json`): runId, workflow, status, startedAt, endedAt, result, cost... */
  readonly run: { readonly [key: string]: unknown };
  /** The run's event log, as read from `events.jsonl`. */
  readonly events: readonly unknown[];
}

export interface RunReportOptions {
  /** Caps the event-log table (the timeline always shows every agent). Default 5,000. */
  readonly maxLogRows?: number;
  /** Caps the rendered result text. Default 200,000 characters. */
  readonly maxResultChars?: number;
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const OUTCOMES: readonly AgentOutcome[] = ['completed', 'failed', 'stopped', 'cached', 'running'];
const STATUSES = ['running', 'paused', 'completed', 'failed', 'stopped', 'denied', 'interrupted'];

export function renderRunReport(input: RunReportInput, options: RunReportOptions = {}): string {
  const run = isRecord(input.run) ? input.run : {};
  const events = Array.isArray(input.events) ? input.events : [];
  const model = foldRunEvents(events);
  const maxLogRows = options.maxLogRows ?? 5000;
  const maxResultChars = options.maxResultChars ?? 200_000;

  const runId = text(run.runId) ?? model.runId ?? 'unknown run';
  const workflow = text(run.workflow) ?? text(run.displayName) ?? model.workflow ?? 'workflow';
  const statusRaw = text(run.status) ?? model.status;
  const status = STATUSES.includes(statusRaw) ? statusRaw : 'unknown';
  // The run's duration is the one every surface prints (bridge runSpan); the timeline's scale
  // may reach further when an agent's record outlives the run's end.
  const runTime = runSpan(run, events);
  const t0 = runTime.startedAt ?? model.startedAt ?? 0;
  let t1 = Math.max(t0, runTime.endedAt ?? model.lastTime ?? t0);
  for (const a of model.agents) t1 = Math.max(t1, a.endedAt ?? a.startedAt);
  const span = Math.max(t1 - t0, 1);
  const scale: Scale = { t0, span };

  const cost = isRecord(run.cost) ? run.cost : undefined;
  const costTokens = cost && isRecord(cost.tokenUsage) ? cost.tokenUsage : undefined;
  const tokens = {
    input: num(costTokens?.inputTokens) ?? model.tokens.input,
    output: num(costTokens?.outputTokens) ?? model.tokens.output,
    total: num(costTokens?.totalTokens) ?? model.tokens.total,
  };
  // Simulated children call no model: their tokens are counted, never spent, and the report says which.
  const tokenKind =
    run.simulated === true
      ? ' (simulated: none spent)'
      : run.simulated === false
        ? ' (real: spent)'
        : '';
  const peak = Math.max(num(cost?.peakConcurrency) ?? 0, model.peakConcurrency);
  const error = errorOf(run.error) ?? model.error;
  const result = 'result' in run ? run.result : model.result;
  const counts = agentCounts(model);

  const parts: string[] = [];
  parts.push(
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(`${workflow} · ${runId}`)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    '<header>',
    `<h1>${esc(workflow)} <span class="status s-${status}">${esc(statusRaw)}</span></h1>`,
    `<p class="sub">run <code>${esc(runId)}</code> · started ${esc(iso(t0))} · <span class="took">${esc(runTime.durationMs === undefined ? 'still running' : duration(runTime.durationMs))}</span></p>`,
    ...provenanceLines(run),
    '<dl class="stats">',
    stat('agents', String(model.agents.length)),
    stat('completed', String(counts.completed + counts.cached)),
    stat('failed', String(counts.failed)),
    stat('stopped', String(counts.stopped)),
    stat('peak concurrency', String(peak)),
    stat('tokens', `${grouped(tokens.total)}${tokenKind}`),
    stat('in / out', `${grouped(tokens.input)} / ${grouped(tokens.output)}`),
    '</dl>',
    '</header>',
  );
  if (error) {
    parts.push(
      `<section class="error"><h2>Error</h2><p><code>${esc(error.code)}</code> ${esc(error.message)}</p></section>`,
    );
  }
  parts.push(renderTimeline(model, scale));
  parts.push(renderConcurrency(model, scale, peak));
  parts.push(renderTokens(model, scale));
  parts.push(renderPhaseTable(model));
  parts.push(renderResult(result, maxResultChars));
  if (model.logs.length > 0) parts.push(renderLogs(model, t0));
  parts.push(renderEventLog(events, t0, maxLogRows));
  parts.push(
    `<footer>wf report · ${esc(String(events.length))} events${model.skippedEvents > 0 ? ` (${model.skippedEvents} malformed, skipped)` : ''} · self-contained page, no script, no network</footer>`,
    '</body></html>',
  );
  return parts.join('\n');
}

interface Scale {
  readonly t0: number;
  readonly span: number;
}

function renderTimeline(model: RunModel, scale: Scale): string {
  const out: string[] = ['<section class="timeline"><h2>Timeline</h2>'];
  out.push('<div class="legend">');
  for (const outcome of OUTCOMES) out.push(`<span class="key o-${outcome}"></span>${outcome}`);
  out.push('</div>');
  out.push(`<div class="axis">${ticks(scale)}</div>`);
  out.push('<div class="lanes">');
  out.push('<div class="bands" aria-hidden="true">');
  model.phases.forEach((phase, i) => {
    out.push(
      `<div class="band b${i % 2} d${Math.min(phase.depth, 3)}" style="${box(phase.startedAt, phase.endedAt ?? scale.t0 + scale.span, scale)}" title="${esc(phaseTitle(phase, scale))}"><span>${esc(clip(phase.name, 40))}</span></div>`,
    );
  });
  out.push('</div>');
  if (model.phases.length > 0)
    out.push(
      '<div class="row phase-row"><div class="label">phases</div><div class="track"></div><div class="meta"></div></div>',
    );
  const agents = [...model.agents].sort(
    (a, b) => a.startedAt - b.startedAt || a.taskId.localeCompare(b.taskId),
  );
  if (agents.length === 0) out.push('<p class="empty">No agent ran in this run.</p>');
  for (const agent of agents) out.push(renderAgentRow(agent, scale));
  out.push('</div></section>');
  return out.join('\n');
}

function renderAgentRow(agent: AgentSpan, scale: Scale): string {
  const end = agent.endedAt ?? scale.t0 + scale.span;
  const outcome = OUTCOMES.includes(agent.outcome) ? agent.outcome : 'running';
  const took = duration(end - agent.startedAt);
  const tip = [
    `${agent.name} (${agent.taskId})`,
    `${outcome} · ${took} · from +${duration(agent.startedAt - scale.t0)}`,
    agent.phase ? `phase ${agent.phase}` : '',
    agent.kind !== 'task' ? `kind ${agent.kind}` : '',
    agent.tokens.total > 0
      ? `tokens ${grouped(agent.tokens.total)} (in ${grouped(agent.tokens.input)}, out ${grouped(agent.tokens.output)})`
      : '',
    agent.error ? `${agent.error.code}: ${agent.error.message}` : '',
  ]
    .filter(Boolean)
    .join('\n');
  const meta = `${took}${agent.tokens.total > 0 ? ` · ${compact(agent.tokens.total)} tok` : ''}`;
  return [
    `<div class="row"><div class="label" title="${esc(tip)}">${esc(clip(agent.name, 48))} <span class="id">${esc(agent.taskId)}</span></div>`,
    `<div class="track"><div class="bar o-${outcome}${agent.kind === 'synthesis' ? ' k-synthesis' : ''}" data-task-id="${esc(agent.taskId)}" style="${box(agent.startedAt, end, scale)}" title="${esc(tip)}"></div></div>`,
    `<div class="meta">${esc(meta)}</div></div>`,
  ].join('');
}

function renderConcurrency(model: RunModel, scale: Scale, peak: number): string {
  const height = 100;
  const top = Math.max(peak, 1);
  const x = (t: number) => round(pct(t, scale) * 10);
  const y = (n: number) => round(height - (n / top) * (height - 4));
  let d = `M0 ${height}`;
  let level = 0;
  for (const point of model.concurrency) {
    d += ` H${x(point.time)} V${y(point.active)}`;
    level = point.active;
  }
  d += ` H1000 V${y(level)} V${height} Z`;
  return [
    '<section class="concurrency"><h2>Concurrency</h2>',
    `<div class="chart"><div class="ylab">${peak}</div>`,
    `<svg viewBox="0 0 1000 ${height}" preserveAspectRatio="none" role="img" aria-label="agents running over time, peak ${peak}"><path d="${d}"/></svg>`,
    `<div class="ylab0">0</div></div>`,
    `<div class="axis">${ticks(scale)}</div>`,
    `<p class="note">Agents running at once over the run; peak ${peak}.</p></section>`,
  ].join('\n');
}

/** Tokens spent so far, stepping up as each agent reports its usage (at its end). */
function renderTokens(model: RunModel, scale: Scale): string {
  const ended = model.agents
    .filter((a) => a.tokens.total > 0)
    .map((a) => ({ time: a.endedAt ?? a.startedAt, tokens: a.tokens.total }))
    .sort((a, b) => a.time - b.time);
  const total = ended.reduce((sum, e) => sum + e.tokens, 0);
  if (total === 0) return '';
  const height = 100;
  const x = (t: number) => round(pct(t, scale) * 10);
  const y = (n: number) => round(height - (n / total) * (height - 4));
  let d = `M0 ${height}`;
  let sum = 0;
  for (const e of ended) {
    sum += e.tokens;
    d += ` H${x(e.time)} V${y(sum)}`;
  }
  d += ` H1000 V${height} Z`;
  return [
    '<section class="tokens"><h2>Tokens</h2>',
    `<div class="chart"><div class="ylab">${esc(compact(total))}</div>`,
    `<svg viewBox="0 0 1000 ${height}" preserveAspectRatio="none" role="img" aria-label="tokens spent over time, ${total} in all"><path d="${d}"/></svg>`,
    `<div class="ylab0">0</div></div>`,
    `<div class="axis">${ticks(scale)}</div>`,
    `<p class="note">Tokens spent over the run (counted when each agent ends); ${esc(grouped(total))} in all.</p></section>`,
  ].join('\n');
}

/** One row per phase instance (by id, not name): each agent counts once, so rows add up. */
function renderPhaseTable(model: RunModel): string {
  if (model.phases.length === 0) return '';
  const stats = phaseStats(model);
  const rows = stats.map(({ phase, durationMs, agents, failed, tokens }) => {
    const took = durationMs === undefined ? 'open' : duration(durationMs);
    return `<tr data-phase-id="${esc(phase.id)}"><td style="padding-left:${8 + 14 * Math.min(phase.depth, 6)}px">${esc(clip(phase.name, 80))}</td><td>${esc(took)}</td><td>${agents}</td><td>${failed}</td><td>${esc(grouped(tokens))}</td></tr>`;
  });
  const outside = model.agents.filter((a) => a.phaseId === undefined);
  if (outside.length > 0) {
    const tokens = outside.reduce((sum, a) => sum + a.tokens.total, 0);
    const failed = outside.filter((a) => a.outcome === 'failed').length;
    rows.push(
      `<tr class="outside"><td><em>outside any phase</em></td><td></td><td>${outside.length}</td><td>${failed}</td><td>${esc(grouped(tokens))}</td></tr>`,
    );
  }
  return `<section class="phases"><h2>Phases</h2><table><thead><tr><th>phase</th><th>duration</th><th>agents</th><th>failed</th><th>tokens</th></tr></thead><tbody>${rows.join('')}</tbody></table><p class="note">Each phase entry is its own row; an agent counts in the innermost phase it ran in, so the rows add up to the run's agents and tokens.</p></section>`;
}

function renderResult(result: unknown, maxChars: number): string {
  if (result === undefined) {
    return '<section class="result"><h2>Result</h2><p class="empty">No result recorded.</p></section>';
  }
  const out = ['<section class="result"><h2>Result</h2>'];
  const prose = proseOf(result);
  if (prose !== undefined) out.push(`<div class="prose">${esc(cap(prose, maxChars))}</div>`);
  if (typeof result !== 'string') {
    const json = safeJson(result, 2);
    const body = `<pre>${esc(cap(json, maxChars))}</pre>`;
    out.push(
      prose === undefined
        ? body
        : `<details><summary>Full result (JSON)</summary>${body}</details>`,
    );
  }
  out.push('</section>');
  return out.join('\n');
}

function renderLogs(model: RunModel, t0: number): string {
  const rows = model.logs
    .slice(0, 1000)
    .map(
      (l) =>
        `<li><span class="t">+${esc(duration(l.time - t0))}</span> ${esc(clip(l.message, 500))}</li>`,
    );
  return `<section class="logs"><h2>Workflow log</h2><ul>${rows.join('')}</ul>${model.logs.length > 1000 ? `<p class="note">${model.logs.length - 1000} more in the event log.</p>` : ''}</section>`;
}

function renderEventLog(events: readonly unknown[], t0: number, maxRows: number): string {
  const rows: string[] = [];
  for (const event of events.slice(0, maxRows)) {
    if (!isRecord(event)) {
      rows.push('<tr class="bad"><td></td><td></td><td>malformed</td><td></td></tr>');
      continue;
    }
    const time = num(event.time);
    rows.push(
      `<tr><td>${esc(String(num(event.seq) ?? ''))}</td><td>${time === undefined ? '' : `+${esc(duration(time - t0))}`}</td><td>${esc(clip(String(event.type), 40))}</td><td><code>${esc(clip(safeJson(event.data, 0), 400))}</code></td></tr>`,
    );
  }
  const more =
    events.length > maxRows
      ? `<p class="note">${events.length - maxRows} more events not shown; see <code>wf events</code>.</p>`
      : '';
  return `<section class="events"><details><summary>Event log (${events.length} events)</summary><table><thead><tr><th>seq</th><th>time</th><th>type</th><th>data</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}</details></section>`;
}

function ticks(scale: Scale): string {
  const step = niceStep(scale.span / 8);
  const out: string[] = [];
  for (let t = 0; t <= scale.span + 1e-9 && out.length < 40; t += step) {
    out.push(`<span style="left:${round((t / scale.span) * 100)}%">${esc(duration(t))}</span>`);
  }
  return out.join('');
}

function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (raw <= m * power) return m * power;
  return 10 * power;
}

function phaseTitle(phase: PhaseSpan, scale: Scale): string {
  const end = phase.endedAt === undefined ? 'open' : duration(phase.endedAt - phase.startedAt);
  return `phase ${phase.name} · from +${duration(phase.startedAt - scale.t0)} · ${end}`;
}

/** Left/width in percent of the run's span; a zero-length span still shows as a sliver. */
function box(start: number, end: number, scale: Scale): string {
  const left = pct(start, scale);
  const width = Math.max(pct(end, scale) - left, 0);
  return `left:${round(left)}%;width:calc(${round(width)}% + 2px)`;
}

function pct(t: number, scale: Scale): number {
  const v = ((t - scale.t0) / scale.span) * 100;
  return Number.isFinite(v) ? Math.min(Math.max(v, 0), 100) : 0;
}

function proseOf(result: unknown): string | undefined {
  if (typeof result === 'string') return result;
  if (!isRecord(result)) return undefined;
  for (const key of ['synthesis', 'summary', 'report', 'text', 'answer']) {
    const value = result[key];
    if (typeof value === 'string' && value.length > 0) return value;
    if (isRecord(value) && typeof value.text === 'string') return value.text;
  }
  return undefined;
}

function stat(label: string, value: string): string {
  return `<div><dt>${esc(label)}</dt><dd>${esc(value)}</dd></div>`;
}

/** HTML-escapes text for element content and double- or single-quoted attributes. */
export function esc(value: string): string {
  return value
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function safeJson(value: unknown, indent: number): string {
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch {
    return String(value);
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

function cap(value: string, max: number): string {
  return value.length > max
    ? `${value.slice(0, max)}\n… (${value.length - max} more characters not shown)`
    : value;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime())
    ? 'unknown'
    : d
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
}

function compact(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

const STYLE = `
:root{--ok:#2f9e44;--fail:#e03131;--stop:#f08c00;--cache:#1c7ed6;--run:#868e96;--ink:#212529;--mute:#6c757d;--line:#dee2e6;--bg:#fff;--band0:rgba(76,110,245,.07);--band1:rgba(76,110,245,.13)}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg);margin:0;padding:24px 28px 48px;max-width:1600px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.sub{color:var(--mute);margin:0 0 12px}
.status{font-size:13px;vertical-align:middle;padding:2px 8px;border-radius:10px;color:#fff;background:var(--run)}
.s-completed{background:var(--ok)}.s-failed,.s-denied{background:var(--fail)}.s-stopped,.s-interrupted{background:var(--stop)}
.stats{display:flex;flex-wrap:wrap;gap:10px;margin:0}.stats div{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:96px}
.stats dt{color:var(--mute);font-size:12px}.stats dd{margin:0;font-size:17px;font-weight:600}
.error{border-left:4px solid var(--fail);padding:2px 12px;background:#fff5f5}
.legend{display:flex;gap:6px 14px;align-items:center;flex-wrap:wrap;color:var(--mute);font-size:12px;margin-bottom:6px}
.key{display:inline-block;width:14px;height:10px;border-radius:2px}
.axis{position:relative;height:18px;margin:0 140px 0 260px;border-bottom:1px solid var(--line);font-size:11px;color:var(--mute)}
.axis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.axis span:first-child{transform:none}
.lanes{position:relative}
.bands{position:absolute;top:0;bottom:0;left:260px;right:140px;pointer-events:none}
.band{position:absolute;top:0;bottom:0;background:var(--band0);border-left:1px dashed rgba(76,110,245,.35)}
.band.b1{background:var(--band1)}
.band span{position:absolute;top:2px;left:4px;font-size:11px;color:#364fc7;white-space:nowrap;overflow:hidden;max-width:100%}
.band.d1 span{top:14px}.band.d2 span{top:26px}.band.d3 span{top:38px}
.row{display:flex;align-items:center;height:18px;position:relative}
.row:hover{background:rgba(0,0,0,.04)}
.phase-row{height:40px}
.label{width:260px;flex:none;padding-right:8px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-size:12px}
.label .id{color:var(--mute);font-size:11px}
.track{position:relative;flex:1;height:100%}
.meta{width:140px;flex:none;text-align:right;font-size:11px;color:var(--mute);white-space:nowrap}
.bar{position:absolute;top:3px;height:12px;border-radius:3px;min-width:2px}
.o-completed{background:var(--ok)}.o-failed{background:var(--fail)}.o-stopped{background:var(--stop)}.o-cached{background:var(--cache)}
.o-running{background:repeating-linear-gradient(45deg,var(--run),var(--run) 4px,#adb5bd 4px,#adb5bd 8px)}
.k-synthesis{outline:2px solid #5f3dc4;outline-offset:-1px}
.chart{position:relative;margin:0 140px 0 260px;height:100px;border-left:1px solid var(--line)}
.chart svg{width:100%;height:100%;display:block}.tokens .chart path{fill:rgba(240,140,0,.3);stroke:#f08c00}.chart path{fill:rgba(76,110,245,.35);stroke:#4c6ef5;stroke-width:1;vector-effect:non-scaling-stroke}
.ylab,.ylab0{position:absolute;left:-28px;font-size:11px;color:var(--mute)}.ylab{top:-2px}.ylab0{bottom:-2px}
.note,.empty{color:var(--mute);font-size:12px}
table{border-collapse:collapse;font-size:12px}th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
.events td code{white-space:pre-wrap;word-break:break-all}
.prose{white-space:pre-wrap;border:1px solid var(--line);border-radius:6px;padding:10px 14px;max-height:480px;overflow:auto}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f9fa;border:1px solid var(--line);border-radius:6px;padding:10px 14px;max-height:480px;overflow:auto;font-size:12px}
.logs ul{margin:0;padding-left:18px;font-size:12px}.logs .t{color:var(--mute)}
summary{cursor:pointer;font-weight:600;margin:20px 0 8px}
footer{margin-top:32px;color:var(--mute);font-size:11px}
`;

/** Which agents ran the children, and the run a resumed run continues: a reader must not guess. */
function provenanceLines(run: Record<string, unknown>): string[] {
  const out: string[] = [];
  const provider = text(run.provider);
  if (run.simulated === true)
    out.push(
      `<p class="sub agents">agents: simulated${provider && provider !== 'simulated' ? ` (${esc(provider)})` : ''}: no model was called</p>`,
    );
  else if (provider) out.push(`<p class="sub agents">agents: ${esc(provider)}</p>`);
  const from = isRecord(run.resumedFrom) ? run.resumedFrom : undefined;
  const fromId = text(from?.runId) ?? text(run.resumedFromRunId);
  if (fromId) {
    const at = num(from?.at);
    out.push(
      `<p class="sub resumed">resumed from run <code>${esc(fromId)}</code>${at === undefined ? '' : ` at ${esc(iso(at))}`}</p>`,
    );
  }
  return out;
}
