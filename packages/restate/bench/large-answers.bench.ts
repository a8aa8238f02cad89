// Large answers by reference: the cost of one child answer of BENCH_ANSWER_MIB (default 16, below
// Restate's 32 MiB limit so the inline baseline can run) sent inline (a worker whose threshold is
// above it: the pre-reference path) and by reference (threshold 1 MiB), side by side on one real
// server, rounds interleaved; prints the calibration line, medians and the ratio.
import { createSimulatedAgents } from '@wf/engine';
import { createSandbox } from '@wf/sandbox';
// A relative import keeps @wf/bench out of this package's dependencies (and the lockfile).
import { calibration, median } from '../../../tooling/bench/index.js';
import { startRestateWorker } from '@wf/restate';
import { startRestateServer } from '../test/helpers/server.js';

// Internal, so not reachable by the package's name: the built module, typed by its source.
const { createRemoteAgents } = (await import(
  new URL('../dist/internal/remote-agents.js', import.meta.url).href
)) as typeof import('../src/internal/remote-agents.js');

const MiB = 1024 * 1024;
const ANSWER = Number(process.env.BENCH_ANSWER_MIB ?? 16) * MiB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

process.env.RESTATE_LOGGING ??= 'WARN';
await calibration();
const text = 'answer-0123456789abcdefghijklmnopqrstuvwxyz-'
  .repeat(ANSWER / 44 + 1)
  .slice(0, ANSWER);
const server = await startRestateServer();
const sandbox = await createSandbox({ poolSize: 1 });

/** One child whose answer is `text`, on a worker with this threshold; wall ms to its result. */
async function once(threshold: number, tag: string): Promise<number> {
  const worker = await startRestateWorker({
    ingress: server.ingress,
    admin: server.admin,
    agents: createSimulatedAgents({ respond: () => ({ text }) }),
    sandbox,
    answerByReferenceBytes: threshold,
  });
  try {
    const agents = createRemoteAgents({
      ingress: server.ingress,
      name: 'bench',
      capabilities: createSimulatedAgents().capabilities,
      signal: new AbortController().signal,
      answers: { ingress: server.ingress, maxBytes: 128 * MiB },
    });
    const t0 = performance.now();
    const handle = await agents.start(
      {
        runId: `bench-${tag}`,
        taskId: 'task-1',
        kind: 'task',
        name: 'big',
        prompt: 'p',
        readOnly: true,
      },
      new AbortController().signal,
    );
    const result = await handle.result;
    const ms = performance.now() - t0;
    if (result.text.length !== ANSWER) throw new Error(`${tag}: got ${result.text.length} chars`);
    return ms;
  } finally {
    await worker.close();
  }
}

const inline: number[] = [];
const byRef: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  inline.push(await once(64 * MiB, `inline-${round}`));
  byRef.push(await once(MiB, `ref-${round}`));
  process.stdout.write(
    `round ${round + 1}: inline ${inline.at(-1)?.toFixed(0)} ms, by reference ${byRef.at(-1)?.toFixed(0)} ms\n`,
  );
}
const a = median(inline);
const b = median(byRef);
process.stdout.write(
  `one ${ANSWER / MiB} MiB child answer, median of ${ROUNDS}: inline ${a.toFixed(0)} ms (baseline), by reference ${b.toFixed(0)} ms (${(b / a).toFixed(2)}x)\n`,
);
await sandbox.close();
await server.stop();
