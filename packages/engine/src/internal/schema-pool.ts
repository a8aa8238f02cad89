// A small process-wide pool of schema workers: ajv compiles and validates guest-supplied schemas
// there, each job under a time limit and each worker under a heap limit, so neither a hostile
// schema nor a huge answer can stall or exhaust the host (invariant 6). Waiting jobs are served
// round-robin by owner (the run that asked), so one run's many validations delay another run's
// by at most one job per busy worker, not by its whole backlog.
import { Worker } from 'node:worker_threads';
import { taskCpuMs } from '@wf/sandbox';

const WORKER_URL = new URL('./schema-worker.js', import.meta.url);

/** Bounds of the schema workers. */
export interface SchemaWorkerLimits {
  /** CPU time of the worker thread one compile + validation may use (wall time where no CPU clock). */
  readonly timeoutMs: number;
  /** Wall time one job may take even when its worker is starved of CPU (a loaded machine). */
  readonly wallBackstopMs?: number;
  readonly maxWorkers: number;
  readonly maxHeapMb: number;
  readonly idleMs: number;
}

export const SCHEMA_WORKER_LIMITS: SchemaWorkerLimits = Object.freeze({
  /**
   * CPU time one compile + validation may use before its worker is ended. Counted in the worker
   * thread's CPU time, so a busy machine never fails an innocent validation.
   */
  timeoutMs: 1_000,
  /** A job that waited this long in wall time ends anyway (a starved worker must not hang a run). */
  wallBackstopMs: 30_000,
  /** Workers running at once; further jobs wait in order. */
  maxWorkers: 4,
  /** V8 old-generation heap of one worker, in MiB. */
  maxHeapMb: 96,
  /** An idle worker is ended after this long. */
  idleMs: 10_000,
});

export type SchemaJobResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** `compile`: the schema is unusable; `validate`: the value does not match; `limit`: a bound. */
      readonly stage: 'compile' | 'validate' | 'limit';
      readonly message: string;
    };

interface Job {
  readonly id: number;
  readonly schema: string;
  readonly value: string | undefined;
  readonly resolve: (r: SchemaJobResult) => void;
}

interface Slot {
  readonly worker: Worker;
  /** Set once the worker has loaded ajv: a job's time limit starts then, not at spawn. */
  ready: boolean;
  job: Job | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The worker thread's OS task id (Linux), for its CPU clock; null elsewhere. */
  tid: number | null;
  /** CPU ms of the worker thread and wall ms when the running job's clock started. */
  cpuAtStart: number;
  wallAtStart: number;
}

export interface SchemaPool {
  /**
   * Compiles `schema` (JSON text) and, when `value` (JSON text) is given, validates it. `owner`
   * (the run that asked) is the unit of round-robin fairness between waiting jobs.
   */
  run(schema: string, value?: string, owner?: object): Promise<SchemaJobResult>;
  /** Ends every worker; jobs in flight resolve as `limit`. */
  close(): Promise<void>;
}

export function createSchemaPool(limits: SchemaWorkerLimits = SCHEMA_WORKER_LIMITS): SchemaPool {
  const slots: Slot[] = [];
  // Waiting jobs per owner; the Map's order is the round-robin turn order.
  const queues = new Map<object | undefined, Job[]>();
  let waiting = 0;
  let ids = 0;

  const nextJob = (): Job | undefined => {
    for (const [owner, jobs] of queues) {
      const job = jobs.shift();
      queues.delete(owner);
      // Served once: to the back of the turn order.
      if (jobs.length > 0) queues.set(owner, jobs);
      if (job !== undefined) waiting -= 1;
      return job;
    }
    return undefined;
  };

  const retire = (slot: Slot, result: SchemaJobResult | undefined) => {
    const at = slots.indexOf(slot);
    if (at < 0) return;
    slots.splice(at, 1);
    if (slot.timer) clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = undefined;
    void slot.worker.terminate();
    if (job)
      job.resolve(result ?? { ok: false, stage: 'limit', message: 'the schema worker ended' });
    pump();
  };

  const idle = (slot: Slot) => {
    slot.timer = setTimeout(() => retire(slot, undefined), limits.idleMs);
    slot.timer.unref();
  };

  const spawn = (): Slot => {
    const worker = new Worker(WORKER_URL, {
      resourceLimits: {
        maxOldGenerationSizeMb: limits.maxHeapMb,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4,
      },
    });
    const slot: Slot = {
      worker,
      ready: false,
      job: undefined,
      timer: undefined,
      tid: null,
      cpuAtStart: Number.NaN,
      wallAtStart: 0,
    };
    // A worker that never loads (a broken install) must not leave its job waiting forever.
    slot.timer = setTimeout(
      () => retire(slot, { ok: false, stage: 'limit', message: 'the schema worker did not start' }),
      30_000,
    );
    worker.on(
      'message',
      (answer: (SchemaJobResult & { id: number }) | { ready: true; tid: number | null }) => {
        if ('ready' in answer) {
          slot.ready = true;
          slot.tid = typeof answer.tid === 'number' ? answer.tid : null;
          if (slot.timer) clearTimeout(slot.timer);
          slot.timer = undefined;
          if (slot.job) startClock(slot);
          else idle(slot);
          return;
        }
        const job = slot.job;
        if (!job || answer.id !== job.id) return;
        if (slot.timer) clearTimeout(slot.timer);
        slot.job = undefined;
        const { id: _id, ...result } = answer;
        job.resolve(result as SchemaJobResult);
        idle(slot);
        pump();
      },
    );
    worker.on('error', (e: Error & { code?: string }) => {
      const oom = e.code === 'ERR_WORKER_OUT_OF_MEMORY';
      retire(slot, {
        ok: false,
        stage: 'limit',
        message: oom
          ? `schema validation ran out of memory (${limits.maxHeapMb} MiB)`
          : 'the schema worker failed',
      });
    });
    worker.on('exit', () => retire(slot, undefined));
    // An idle worker must not keep the host process alive; a running job's timer does. After the
    // listeners: adding a 'message' listener refs the worker's port again, and a process whose
    // run validated a schema then waited for the 10 s idle timer before it could exit.
    worker.unref();
    slots.push(slot);
    return slot;
  };

  const threadCpu = (slot: Slot) => (slot.tid === null ? Number.NaN : taskCpuMs(slot.tid));

  // A job's limit is the worker thread's CPU time: on a loaded machine the thread may wait for a
  // core far longer than it computes, and that wait is no reason to fail an innocent run. The
  // check re-arms until the job has used timeoutMs of CPU or waited wallBackstopMs.
  const startClock = (slot: Slot) => {
    if (slot.timer) clearTimeout(slot.timer);
    slot.cpuAtStart = threadCpu(slot);
    slot.wallAtStart = performance.now();
    const backstop = limits.wallBackstopMs ?? limits.timeoutMs;
    const check = () => {
      const used = threadCpu(slot) - slot.cpuAtStart;
      const waited = performance.now() - slot.wallAtStart;
      if (Number.isFinite(used) && used < limits.timeoutMs && waited < backstop) {
        slot.timer = setTimeout(check, Math.max(20, limits.timeoutMs - used));
        return;
      }
      retire(slot, {
        ok: false,
        stage: 'limit',
        message: Number.isFinite(used)
          ? used >= limits.timeoutMs
            ? `schema validation used more than ${limits.timeoutMs} ms of CPU`
            : `schema validation took longer than ${Math.round(waited)} ms (wall backstop)`
          : `schema validation took longer than ${limits.timeoutMs} ms`,
      });
    };
    slot.timer = setTimeout(check, limits.timeoutMs);
  };

  const pump = () => {
    while (waiting > 0) {
      let slot = slots.find((s) => s.job === undefined);
      if (!slot) {
        if (slots.length >= limits.maxWorkers) return;
        slot = spawn();
      }
      const job = nextJob();
      if (job === undefined) return;
      slot.job = job;
      if (slot.ready) startClock(slot);
      slot.worker.postMessage({ id: job.id, schema: job.schema, value: job.value });
    }
    // One spare worker loads ahead while the others are busy, so the next run's validation does
    // not wait for a cold start behind a slow one (a bystander pays at most a queue turn).
    if (
      slots.length > 0 &&
      slots.length < limits.maxWorkers &&
      slots.every((s) => s.job !== undefined)
    ) {
      spawn();
    }
  };

  return {
    run(schema, value, owner) {
      return new Promise<SchemaJobResult>((resolve) => {
        ids += 1;
        const jobs = queues.get(owner);
        const job = { id: ids, schema, value, resolve };
        if (jobs === undefined) queues.set(owner, [job]);
        else jobs.push(job);
        waiting += 1;
        pump();
      });
    },
    async close() {
      queues.clear();
      waiting = 0;
      for (const slot of [...slots]) retire(slot, undefined);
    },
  };
}

let shared: SchemaPool | undefined;
/** The process-wide pool every engine shares (workers are created on demand, ended when idle). */
export function sharedSchemaPool(): SchemaPool {
  shared ??= createSchemaPool();
  return shared;
}
