// The run records the store keeps, under this package's names. The shapes are declared once in
// @wf/bridge (which the engine's RunRecorder port also uses); this package may not import
// @wf/engine (docs/design.md#layers), and a conformance test proves the store satisfies the port.
import type {
  JournalEntry,
  RunCost,
  RunEvent,
  RunFinishRecord,
  RunStartRecord,
  TerminalRunStatus,
} from '@wf/bridge';

export type { RunStatus, TerminalRunStatus } from '@wf/bridge';

export const TERMINAL_STATUSES: readonly TerminalRunStatus[] = [
  'completed',
  'failed',
  'stopped',
  'denied',
  'interrupted',
];

/** An event line as stored: any event type is kept, not only the ones this engine emits. */
export type RunEventRecord = RunEvent<string>;
export type RunCostRecord = RunCost;
export type RunStartRecordShape = RunStartRecord;
export type JournalEntryRecord = JournalEntry;
export type RunFinishRecordShape = RunFinishRecord;
