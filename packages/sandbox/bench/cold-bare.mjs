// Child of coldstart.bench.ts: the same first result with bare quickjs-emscripten (load, compile,
// instantiate, one run in the main thread: the floor).
import { bareQuickJs } from '@wf/bench';

const bare = await bareQuickJs();
const v = bare.runOnce();
const at = performance.now();
if (v !== 42) throw new Error(String(v));
console.log(JSON.stringify({ firstResultMs: at }));
