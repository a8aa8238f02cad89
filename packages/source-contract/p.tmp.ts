import { readdirSync, readFileSync } from 'node:fs';
import { checkWorkflowSource } from './src/index.ts';
const corpus = readdirSync('test/fixtures/good').map((f) => readFileSync('test/fixtures/good/' + f, 'utf8'));
for (let i = 0; i < 3000; i++) for (const s of corpus) checkWorkflowSource(s);
