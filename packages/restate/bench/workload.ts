// The benches' workload: one run fans out AGENTS instant simulated agents (args.n) and logs once.
export const AGENTS = 20;
// AGENTS runAgent calls + 1 log per run
export const CALLS_PER_RUN = AGENTS + 1;

export const manifest = {
  name: 'restate-bench',
  description: 'Fan out 20 instant simulated agents.',
  phases: ['fan-out'],
  readOnly: false,
  maxAgents: AGENTS,
  maxConcurrency: AGENTS,
  patterns: ['fan-out-and-synthesize'],
};

export const source = `async function run(wf, args) {
  const out = await wf.parallel(Array.from({ length: args.n }, (_, i) => () =>
    wf.runAgent({ name: 'agent-' + i, prompt: 'Look at part ' + i })));
  wf.log({ message: 'done', data: { n: out.length } });
  return out.map((r) => r.finalText.length);
}`;
