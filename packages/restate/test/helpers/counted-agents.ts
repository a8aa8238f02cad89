// Simulated agents that log every child start and end to a shared file (one line each, O_APPEND),
// so tests count children from the agents' side across worker processes.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { type AgentProvider, createSimulatedAgents, simulatedTokens } from '@wf/engine';

export function countedAgents(log: string, seed: number, delayMs: number): AgentProvider {
  const inner = createSimulatedAgents({ seed, delayMs });
  return {
    name: inner.name,
    simulated: true,
    capabilities: inner.capabilities,
    estimateTokens: simulatedTokens,
    async start(request, signal, meter) {
      const key = `${request.runId}/${request.taskId}`;
      appendFileSync(log, `start ${key} ${process.pid} ${Date.now()}\n`);
      const handle = await inner.start(request, signal, meter);
      return {
        ...handle,
        id: handle.id,
        result: handle.result.then((r) => {
          appendFileSync(log, `end ${key} ${process.pid} ${Date.now()}\n`);
          return r;
        }),
        stop: (reason) => handle.stop(reason),
        dispose: () => handle.dispose(),
      };
    },
  };
}

/** One line of the log: what happened, to which key, in which process, when (epoch ms). */
export interface LogLine {
  readonly kind: string;
  readonly key: string;
  readonly pid: string;
  readonly at: number;
}

export function logLines(log: string): LogLine[] {
  const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
  return text
    .split('\n')
    .map((l) => l.split(' '))
    .filter((p) => p.length === 4)
    .map(([kind, key, pid, at]) => ({
      kind: String(kind),
      key: String(key),
      pid: String(pid),
      at: Number(at),
    }));
}

export interface AgentLog {
  readonly started: Map<string, number>;
  readonly ended: Map<string, number>;
  /** Most children running at once (start/end order as appended). */
  readonly peak: number;
  readonly pids: Set<string>;
}

export function readAgentLog(log: string): AgentLog {
  const started = new Map<string, number>();
  const ended = new Map<string, number>();
  const pids = new Set<string>();
  let active = 0;
  let peak = 0;
  for (const { kind, key, pid } of logLines(log)) {
    if (kind !== 'start' && kind !== 'end') continue;
    pids.add(pid);
    const m = kind === 'start' ? started : ended;
    m.set(key, (m.get(key) ?? 0) + 1);
    active += kind === 'start' ? 1 : -1;
    peak = Math.max(peak, active);
  }
  return { started, ended, peak, pids };
}
