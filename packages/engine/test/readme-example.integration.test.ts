// The README's worked example, run as written (the source is read from README.md).
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createEngine, createSimulatedAgents, type RunEvent } from '../src/index.js';

it('the README example runs and completes', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const source = /const source = `([\s\S]*?)`;/.exec(readme)?.[1];
  const manifestText = /const manifest = (\{[\s\S]*?\});/.exec(readme)?.[1];
  expect(source).toBeDefined();
  expect(manifestText).toBeDefined();
  const manifest = Function(`return (${manifestText});`)() as Record<string, unknown>;
  const engine = createEngine({ agents: createSimulatedAgents({ seed: 1 }) });
  const run = await engine.start({
    workflow: { manifest, source: source as string },
    args: { areas: ['auth', 'billing'] },
    trust: 'capability-generated',
  });
  const events: RunEvent[] = [];
  for await (const event of run.events) events.push(event);
  const done = await run.done;
  await engine.close();
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(done.result).toMatchObject({
    report: expect.stringContaining('synthesis'),
    left: expect.any(Number),
  });
  expect(done.cost.agentsStarted).toBe(5);
  expect(events.at(-1)?.type).toBe('workflow-completed');
});
