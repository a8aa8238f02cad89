// Child of coldstart.bench.ts: a fresh process's first sandbox result. Prints the ms since the
// process started (performance.now()) at the moment the result is in hand. Argument: the entry to
// import (the parent passes the published one, dist/internal/sandbox.bundle.js, or '@wf/sandbox',
// the repository's dist/index.js); it is given, not read here, so that the child loads nothing else.
const { createSandbox } = await import(process.argv[2] ?? '@wf/sandbox');
const sb = await createSandbox();
const o = await sb.run({
  source: 'async function run(api) { return (await api.x(41)) + 1; }',
  capabilities: { x: (/** @type {number} */ v) => v },
});
const at = performance.now();
if (o.status !== 'completed' || o.value !== 42) throw new Error(JSON.stringify(o));
console.log(JSON.stringify({ firstResultMs: at }));
await sb.close();
