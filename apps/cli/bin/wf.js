#!/usr/bin/env node
// The `wf` command line. The program lives in dist/cli/main.js (built by `tsc -b apps/cli`).
import { main } from '../dist/cli/main.js';

await main(process.argv);
