// The WfJournal virtual object, keyed by run id: the run's durable journal (one state entry per
// delivered call, `e<settleSeq>`, and the count) and its durable record, the one view of the run
// whichever workers executed it: the start record, the events of every attempt numbered on from
// the earlier ones (`v<seq>`), and the finish record. Appends of entries and events travel in
// one request.
import './sdk-setup.js';
import * as restate from '@restatedev/restate-sdk';
import type { JournalEntry, RunEvent, RunFinishRecord, RunStartRecord } from '@wf/engine';
import { JOURNAL_OBJECT } from './names.js';

/** What one append request carries (an array: entries only, as older workers sent). */
export interface JournalAppend {
  readonly entries: JournalEntry[];
  /** The attempt (from `open`) whose events these are: a stale attempt's are dropped. */
  readonly attempt?: number;
  /** Events, already numbered after the ones stored when the attempt opened. */
  readonly events?: RunEvent[];
  readonly start?: RunStartRecord;
  readonly finish?: RunFinishRecord;
}

/** What a reader gets of a run's record (events are paged separately). */
export interface RunRecord {
  readonly start?: RunStartRecord;
  readonly finish?: RunFinishRecord;
  readonly lastSeq: number;
  readonly attempts: number;
}

const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * What a run is asked to do from outside (wf pause / resume / stop), and the children whose stop
 * its orchestrator asked for: the workers executing the run and its children read it.
 */
export interface RunControl {
  readonly run: 'running' | 'paused' | 'stopping';
  readonly reason?: string;
  /** Task ids of children to stop (wherever they run). */
  readonly stopped: readonly string[];
}

export interface ControlChange {
  readonly run?: 'running' | 'paused' | 'stopping';
  readonly reason?: string;
  readonly stop?: readonly string[];
}

const NO_CONTROL: RunControl = { run: 'running', stopped: [] };
/** A run stops many children at most its maxAgents: the list is bounded anyway. */
const MAX_STOPPED = 10_000;

export const journalObject = restate.object({
  name: JOURNAL_OBJECT,
  handlers: {
    /** A new attempt begins: its number, and how far the stored events go. */
    open: async (ctx: restate.ObjectContext): Promise<{ attempt: number; lastSeq: number }> => {
      const attempt = ((await ctx.get<number>('attempts')) ?? 0) + 1;
      ctx.set('attempts', attempt);
      return { attempt, lastSeq: (await ctx.get<number>('lastSeq')) ?? 0 };
    },
    /** Appends consecutive deliveries, keeping those before the first refused one. */
    append: async (ctx: restate.ObjectContext, input: JournalAppend | JournalEntry[]) => {
      const batch: JournalAppend = Array.isArray(input) ? { entries: input } : input;
      let count = (await ctx.get<number>('count')) ?? 0;
      let refused = false;
      for (const entry of batch.entries ?? []) {
        if (entry.settleSeq <= count) {
          // The same delivery again (a retried request) is fine; a different one conflicts.
          const stored = await ctx.get<JournalEntry>(`e${entry.settleSeq}`);
          if (JSON.stringify(stored) === JSON.stringify(entry)) continue;
          refused = true;
          break;
        }
        if (entry.settleSeq !== count + 1) {
          refused = true;
          break;
        }
        ctx.set(`e${entry.settleSeq}`, entry);
        count = entry.settleSeq;
      }
      ctx.set('count', count);
      const current = (await ctx.get<number>('attempts')) ?? 0;
      if (!refused && (batch.attempt === undefined || batch.attempt === current)) {
        if (batch.start && !(await ctx.get('start'))) ctx.set('start', batch.start);
        let last = (await ctx.get<number>('lastSeq')) ?? 0;
        for (const event of batch.events ?? []) {
          if (typeof event?.seq !== 'number' || event.seq <= last) continue;
          ctx.set(`v${event.seq}`, event);
          last = event.seq;
        }
        ctx.set('lastSeq', last);
        if (batch.finish) ctx.set('finish', batch.finish);
      }
      return { ok: !refused, count };
    },
    /** Entries from `from` on, up to ~8 MiB of JSON (a reply must stay below the limit). */
    page: restate.handlers.object.shared(
      async (ctx: restate.ObjectSharedContext, input: { from: number }) => {
        const count = (await ctx.get<number>('count')) ?? 0;
        const out: JournalEntry[] = [];
        let bytes = 0;
        let i = Math.max(1, Math.floor(Number(input?.from) || 1));
        for (; i <= count && bytes < PAGE_BYTES; i += 1) {
          const e = await ctx.get<JournalEntry>(`e${i}`);
          if (!e) continue;
          out.push(e);
          bytes += JSON.stringify(e).length;
        }
        return { entries: out, more: i <= count };
      },
    ),
    entries: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => {
      const count = (await ctx.get<number>('count')) ?? 0;
      const out: JournalEntry[] = [];
      for (let i = 1; i <= count; i += 1) {
        const e = await ctx.get<JournalEntry>(`e${i}`);
        if (e) out.push(e);
      }
      return out;
    }),
    /** The run's control (what wf pause / resume / stop asked, and the children to stop). */
    control: restate.handlers.object.shared(
      async (ctx: restate.ObjectSharedContext): Promise<RunControl> =>
        (await ctx.get<RunControl>('control')) ?? NO_CONTROL,
    ),
    /** Changes the control; a stopping run stays stopping (a resume does not undo a stop). */
    setControl: async (ctx: restate.ObjectContext, change: ControlChange): Promise<RunControl> => {
      const now = (await ctx.get<RunControl>('control')) ?? NO_CONTROL;
      const run =
        now.run === 'stopping' || change?.run === undefined
          ? now.run
          : (change.run as RunControl['run']);
      if (!['running', 'paused', 'stopping'].includes(run))
        throw new restate.TerminalError(`no such control: ${String(change?.run)}`);
      const stop = Array.isArray(change?.stop)
        ? change.stop.filter((t) => typeof t === 'string')
        : [];
      const next: RunControl = {
        run,
        ...(typeof change?.reason === 'string'
          ? { reason: change.reason.slice(0, 500) }
          : now.reason === undefined
            ? {}
            : { reason: now.reason }),
        stopped: [...new Set([...now.stopped, ...stop])].slice(0, MAX_STOPPED),
      };
      ctx.set('control', next);
      return next;
    },
    /** Forgets an ended run: its journal, record and control (deleteRun). An active run stays. */
    clear: async (ctx: restate.ObjectContext): Promise<{ cleared: boolean }> => {
      if (!(await ctx.get('finish'))) return { cleared: false };
      ctx.clearAll();
      return { cleared: true };
    },
    /** The run's record without its events. */
    record: restate.handlers.object.shared(
      async (ctx: restate.ObjectSharedContext): Promise<RunRecord> => {
        const start = await ctx.get<RunStartRecord>('start');
        const finish = await ctx.get<RunFinishRecord>('finish');
        return {
          ...(start ? { start } : {}),
          ...(finish ? { finish } : {}),
          lastSeq: (await ctx.get<number>('lastSeq')) ?? 0,
          attempts: (await ctx.get<number>('attempts')) ?? 0,
        };
      },
    ),
    /** Events with seq above `after`, up to ~8 MiB of JSON. */
    events: restate.handlers.object.shared(
      async (ctx: restate.ObjectSharedContext, input: { after?: number }) => {
        const last = (await ctx.get<number>('lastSeq')) ?? 0;
        const out: RunEvent[] = [];
        let bytes = 0;
        let seq = Math.max(0, Math.floor(Number(input?.after) || 0)) + 1;
        for (; seq <= last && bytes < PAGE_BYTES; seq += 1) {
          const e = await ctx.get<RunEvent>(`v${seq}`);
          if (!e) continue;
          out.push(e);
          bytes += JSON.stringify(e).length;
        }
        return { events: out, more: seq <= last };
      },
    ),
  },
});
