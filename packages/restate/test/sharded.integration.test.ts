// The sharded semaphore on the real server (worker option semaphoreShards): a cap of 4
// split over 2 WfSemaphore keys holds across two workers, counted from the agents' side, and is
// used in full (both keys hand out slots at once: one key alone holds 2).
import { expect, it } from 'vitest';
import { awaitRun, submitRun } from '../src/index.js';
import { useCluster } from './helpers/cluster.js';
import { readAgentLog } from './helpers/counted-agents.js';
import { FLOW_CHILDREN, flowStart } from './helpers/flow.js';

const CAP = 4;
const c = useCluster('wf-restate-sharded-', 300, CAP, 2);

it('a cap split over two semaphore keys holds across two workers and is used in full', async () => {
  const runIds = ['shard-a', 'shard-b', 'shard-c', 'shard-d'];
  // 4 runs x 3 concurrent reviews each: 12 children want to run at once, the cap is 4.
  await Promise.all(runIds.map((id, i) => submitRun(c.server.ingress, flowStart(id, i))));
  const dones = await Promise.all(runIds.map((id) => awaitRun(c.server.ingress, id)));
  for (const d of dones) expect(d.status, JSON.stringify(d.error)).toBe('completed');
  const counted = readAgentLog(c.log);
  const started = [...counted.started.keys()].filter((k) => k.startsWith('shard-'));
  expect(started.length).toBe(runIds.length * FLOW_CHILDREN);
  expect(counted.peak).toBeLessThanOrEqual(CAP);
  expect(counted.peak).toBeGreaterThan(CAP / 2);
}, 120_000);
