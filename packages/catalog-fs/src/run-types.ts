// Structural copies of the engine's RunRecorder port types (packages/engine/src/ports.ts). This
// package may not import @wf/engine (DESIGN.md section 3); a conformance test proves the store
// satisfies the real port.

export type RunStatus =
  | 'running'
  | 'paused'
  | 'completed'
  | 'failed'
  | 'stopped'
  | 'denied'
  | 'interrupted';

export type TerminalRunStatus = Exclude<RunStatus, 'running' | 'paused'>;

export const TERMINAL_STATUSES: readonly TerminalRunStatus[] = [
  'completed',
  'failed',
  'stopped',
  'denied',
  'interrupted',
];

export interface RunEventRecord {
  readonly seq: number;
  readonly runId: string;
  readonly type: string;
  readonly time: number;
  readonly data: { readonly [key: string]: unknown };
}

export interface RunCostRecord {
  readonly wallClockDurationMs: number;
  readonly agentsStarted: number;
  readonly agentsCompleted: number;
  readonly cacheHits: number;
  readonly tokenUsage: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly totalTokens: number;
  };
  readonly peakConcurrency: number;
}

export interface RunStartRecordShape {
  readonly runId: string;
  readonly workflow: string;
  readonly trust: 'trusted-package' | 'capability-generated' | 'trusted-local';
  readonly manifest: unknown;
  readonly source?: string;
  readonly args: unknown;
  readonly seed: number;
  readonly startTime: number;
  readonly startedAt: number;
  readonly resumedFromRunId?: string;
  readonly sourceRunId?: string;
  readonly revisionOf?: string;
}

export interface JournalEntryRecord {
  readonly seq: number;
  readonly settleSeq: number;
  readonly method: string;
  readonly input: unknown;
  readonly outcome:
    | { readonly ok: true; readonly value: unknown }
    | { readonly ok: false; readonly error: { readonly code: string; readonly message: string } };
  readonly settledAt: number;
}

export interface RunFinishRecordShape {
  readonly status: TerminalRunStatus;
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly cost: RunCostRecord;
  readonly endedAt: number;
}
