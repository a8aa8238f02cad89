// The in-memory recorder keeps JSON text, not parsed copies (invariant 6): guest-controlled inputs
// cost about their JSON size, and the public view still reads as parsed records.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createMemoryRecorder } from '../src/memory-recorder.js';
import type { RunStartRecord } from '../src/ports.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const start = (runId: string) =>
  ({
    runId,
    workflowName: 'w',
    trust: 'capability-generated',
    source: 'async function run() {}',
    manifest: {},
    args: null,
    seed: 1,
    startTime: 0,
  }) as unknown as RunStartRecord;

describe('createMemoryRecorder', () => {
  it('keeps a journal of many small objects at about its JSON size (parsed copies cost ~14x)', async () => {
    const recorder = createMemoryRecorder();
    await recorder.begin(start('r1'));
    let jsonChars = 0;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i += 1) {
      // A fresh parsed input per call, as the sandbox delivers it: 5,000 small objects each.
      const input = JSON.parse(
        JSON.stringify({
          data: Array.from({ length: 5_000 }, (_, k) => ({ k, v: [k, { w: 1 }] })),
        }),
      );
      const entry = {
        seq: i + 1,
        settleSeq: i + 1,
        method: 'log',
        input,
        outcome: { ok: true as const, value: null },
        settledAt: 0,
      };
      jsonChars += JSON.stringify(entry).length;
      recorder.journal('r1', entry);
      recorder.event({ seq: i + 1, runId: 'r1', type: 'workflow-log', time: 0, data: input });
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Two copies (journal and event) of ~130 KB of JSON per call; one-byte strings cost their size.
    console.log(`recorder heap growth ${grown} bytes for 2 x ${jsonChars} chars of JSON`);
    expect(grown).toBeLessThan(2 * jsonChars * 1.5);
    const run = recorder.get('r1');
    expect(run?.journal).toHaveLength(40);
    expect(run?.events[3]?.data).toMatchObject({ data: expect.any(Array) });
    // Each read is a fresh parse: mutating it does not change the record.
    (run?.journal[0] as { method: string }).method = 'changed';
    expect(recorder.get('r1')?.journal[0]?.method).toBe('log');
  });

  it('keeps artifacts write-once and the finish record readable', async () => {
    const recorder = createMemoryRecorder();
    await recorder.begin(start('r2'));
    await recorder.artifact('r2', 'a', { x: [1, 2] });
    await expect(recorder.artifact('r2', 'a', 1)).rejects.toMatchObject({
      code: 'WF_ENGINE_ARTIFACT_EXISTS',
    });
    expect(recorder.get('r2')?.artifacts.get('a')).toEqual({ x: [1, 2] });
    await recorder.finish('r2', { status: 'completed' } as never);
    expect(recorder.get('r2')?.finish).toEqual({ status: 'completed' });
    expect(recorder.get('r2')?.snapshot.status).toBe('completed');
  });
});
