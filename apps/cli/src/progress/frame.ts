// Live progress as a pure function: a run model (folded events) and a clock in, the lines of one
// compact tree out. It always fits the terminal it is given (width and height), collapsing finished
// phases and then summarising agents when a run has more of them than there are rows.
// Agent and phase names are untrusted: each passes terminalText (one line) before it is measured,
// so a name can never move the cursor, recolour the terminal or reorder the line.
import { terminalText } from '@wf/bridge/terminal-text';
import { type AgentSpan, duration, grouped, type RunModel } from '@wf/report';

export interface FrameOptions {
  /** Epoch ms "now", for the elapsed time of running agents and of the run. */
  readonly now: number;
  /** Terminal columns; lines are cut to `width - 1` so the terminal never wraps them. */
  readonly width: number;
  /** Most lines the frame may take. */
  readonly maxLines: number;
  /** Use box-drawing characters and symbols (a UTF-8 terminal); ASCII otherwise. */
  readonly unicode?: boolean;
  /** Shown on the header line after the workflow name (e.g. `simulated agents`). */
  readonly note?: string;
}

interface Glyphs {
  tee: string;
  end: string;
  pipe: string;
  blank: string;
  running: string;
  completed: string;
  failed: string;
  stopped: string;
  cached: string;
  sep: string;
}

const UNICODE: Glyphs = {
  tee: '├─ ',
  end: '└─ ',
  pipe: '│  ',
  blank: '   ',
  running: '●',
  completed: '✔',
  failed: '✖',
  stopped: '■',
  cached: '↺',
  sep: ' · ',
};
const ASCII: Glyphs = {
  tee: '|- ',
  end: '`- ',
  pipe: '|  ',
  blank: '   ',
  running: '*',
  completed: '+',
  failed: 'x',
  stopped: '-',
  cached: '=',
  sep: ' | ',
};

interface Group {
  name: string | undefined;
  startedAt: number;
  endedAt: number | undefined;
  open: boolean;
  agents: AgentSpan[];
}

export function renderProgressFrame(model: RunModel, options: FrameOptions): string[] {
  const g = options.unicode ? UNICODE : ASCII;
  const width = Math.max(options.width - 1, 20);
  const maxLines = Math.max(options.maxLines, 3);
  const now = options.now;
  const groups = groupByPhase(model);
  const header = headerLine(model, now, g, options.note);
  const footer = footerLine(model, g);

  // Most detailed first; the first layout that fits wins.
  const budget = maxLines - 2;
  let body = treeLines(groups, now, g, 'all');
  if (body.length > budget) body = treeLines(groups, now, g, 'collapse-finished');
  if (body.length > budget) body = treeLines(groups, now, g, 'summarise');
  if (body.length > budget) {
    // Keep the latest lines (the open phases come last) and say how many were left out.
    const kept = budget > 1 ? body.slice(body.length - (budget - 1)) : [];
    const hidden = body.length - kept.length;
    body = [`${g.blank}… ${hidden} earlier line${hidden === 1 ? '' : 's'}`, ...kept];
  }
  const lines = [header, ...body, footer];
  return options.unicode
    ? lines.map((line) => fit(line, width, '…'))
    : lines.map((line) => fit(line.replaceAll('…', '...'), width, '...'));
}

function groupByPhase(model: RunModel): Group[] {
  const groups: Group[] = [];
  const byName = new Map<string, Group>();
  for (const phase of model.phases) {
    if (phase.depth > 0 && byName.has(phase.name)) continue;
    let group = byName.get(phase.name);
    if (!group) {
      group = {
        name: phase.name,
        startedAt: phase.startedAt,
        endedAt: undefined,
        open: false,
        agents: [],
      };
      byName.set(phase.name, group);
      groups.push(group);
    }
    group.open = group.open || phase.endedAt === undefined;
    group.endedAt =
      phase.endedAt === undefined ? undefined : Math.max(group.endedAt ?? 0, phase.endedAt);
  }
  const loose: Group = {
    name: undefined,
    startedAt: model.startedAt ?? 0,
    endedAt: undefined,
    open: true,
    agents: [],
  };
  for (const agent of model.agents) {
    const group = agent.phase === undefined ? undefined : byName.get(agent.phase);
    (group ?? loose).agents.push(agent);
  }
  if (loose.agents.length > 0) groups.push(loose);
  return groups;
}

type Detail = 'all' | 'collapse-finished' | 'summarise';

function treeLines(groups: readonly Group[], now: number, g: Glyphs, detail: Detail): string[] {
  const lines: string[] = [];
  groups.forEach((group, gi) => {
    const lastGroup = gi === groups.length - 1;
    const stem = lastGroup ? g.end : g.tee;
    const indent = lastGroup ? g.blank : g.pipe;
    lines.push(`${stem}${groupLine(group, now, g)}`);
    const running = group.agents.filter((a) => a.outcome === 'running');
    const active = group.open || running.length > 0;
    let shown: AgentSpan[];
    if (detail === 'all') shown = group.agents;
    else if (detail === 'collapse-finished') shown = active ? group.agents : [];
    else
      shown = active
        ? [...running, ...group.agents.filter((a) => a.outcome === 'failed')].slice(0, 6)
        : [];
    const hidden = group.agents.length - shown.length;
    const nameWidth = Math.min(Math.max(0, ...shown.map((a) => terminalText(a.name).length)), 28);
    const rows = shown.map((agent) => agentLine(agent, now, g, nameWidth));
    if (hidden > 0 && shown.length > 0) rows.push(`… ${hidden} more`);
    rows.forEach((row, i) => {
      lines.push(`${indent}${i === rows.length - 1 ? g.end : g.tee}${row}`);
    });
  });
  return lines;
}

function groupLine(group: Group, now: number, g: Glyphs): string {
  const counts = tally(group.agents);
  const parts: string[] = [];
  if (counts.running > 0) parts.push(`${counts.running} running`);
  if (counts.done > 0) parts.push(`${counts.done} done`);
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  if (counts.stopped > 0) parts.push(`${counts.stopped} stopped`);
  const end = group.endedAt ?? now;
  const name = group.name === undefined ? '(no phase)' : terminalText(group.name);
  const state = group.open ? '' : ' done';
  const agents = group.agents.length === 1 ? '1 agent' : `${group.agents.length} agents`;
  return `${name}${state}${g.sep}${duration(end - group.startedAt)}${g.sep}${agents}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}

function agentLine(agent: AgentSpan, now: number, g: Glyphs, nameWidth: number): string {
  const mark = g[agent.outcome];
  const took = duration((agent.endedAt ?? now) - agent.startedAt);
  const tokens = agent.tokens.total > 0 ? `${g.sep}${grouped(agent.tokens.total)} tok` : '';
  const error = agent.error
    ? `${g.sep}${terminalText(agent.error.code)} ${terminalText(agent.error.message)}`
    : '';
  const state =
    agent.outcome === 'running'
      ? 'running '
      : agent.outcome === 'completed'
        ? ''
        : `${agent.outcome} `;
  return `${mark} ${clip(terminalText(agent.name), 28).padEnd(nameWidth)} ${state}${took}${tokens}${error}`;
}

function headerLine(model: RunModel, now: number, g: Glyphs, note: string | undefined): string {
  const end = model.endedAt ?? now;
  const elapsed = duration(end - (model.startedAt ?? now));
  const name = terminalText(model.workflow ?? 'workflow');
  const bits = [`${name}`, model.status, elapsed];
  if (model.runId) bits.push(terminalText(model.runId));
  if (note) bits.push(note);
  return bits.join(g.sep);
}

function footerLine(model: RunModel, g: Glyphs): string {
  const counts = tally(model.agents);
  const t = model.tokens;
  return [
    `agents ${model.agents.length}: ${counts.running} running, ${counts.done} done, ${counts.failed} failed${counts.stopped > 0 ? `, ${counts.stopped} stopped` : ''}`,
    `tokens ${grouped(t.total)} (in ${grouped(t.input)}, out ${grouped(t.output)})`,
    `peak ${model.peakConcurrency}`,
  ].join(g.sep);
}

function tally(agents: readonly AgentSpan[]) {
  const counts = { running: 0, done: 0, failed: 0, stopped: 0 };
  for (const a of agents) {
    if (a.outcome === 'running') counts.running += 1;
    else if (a.outcome === 'completed' || a.outcome === 'cached') counts.done += 1;
    else if (a.outcome === 'failed') counts.failed += 1;
    else counts.stopped += 1;
  }
  return counts;
}

function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

function fit(line: string, width: number, ellipsis: string): string {
  const chars = [...line];
  return chars.length > width
    ? `${chars.slice(0, width - ellipsis.length).join('')}${ellipsis}`
    : line;
}
