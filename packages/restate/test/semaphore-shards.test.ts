// The sharded deployment semaphore (names.ts): the shards' capacities add up to the cap exactly,
// a child's key always maps to the same shard (a retried acquire and the release meet the slot),
// and a run's children spread round-robin, so n concurrent children of one run put at most
// ceil(n / shards) on any shard.
import { describe, expect, it } from 'vitest';
import { shardCapacities, shardKey, shardOf } from '../src/internal/names.js';

describe('semaphore shards', () => {
  it('split the cap exactly, every shard holding at least one slot', () => {
    for (const [cap, shards] of [
      [16, 1],
      [16, 4],
      [17, 4],
      [5, 5],
      [100, 8],
    ] as const) {
      const caps = shardCapacities(cap, shards);
      expect(caps).toHaveLength(shards);
      expect(caps.reduce((a, b) => a + b, 0)).toBe(cap);
      expect(Math.min(...caps)).toBeGreaterThanOrEqual(1);
      expect(Math.max(...caps) - Math.min(...caps)).toBeLessThanOrEqual(1);
    }
  });

  it('keep one shard per child key, and the first shard keeps the old key', () => {
    expect(shardKey(0)).toBe('deployment');
    expect(shardKey(3)).toBe('deployment.3');
    for (const key of ['r1/task-7', 'r1.wf3-0a1b2c3d/task-2', 'no-task-number/x']) {
      const s = shardOf(key, 4);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(4);
      expect(shardOf(key, 4)).toBe(s);
      expect(shardOf(key, 1)).toBe(0);
    }
  });

  it("spread a run's children evenly, whatever the run id", () => {
    for (let r = 0; r < 50; r += 1) {
      const counts = new Map<number, number>();
      for (let t = 1; t <= 16; t += 1) {
        const s = shardOf(`run-${r}/task-${t}`, 4);
        counts.set(s, (counts.get(s) ?? 0) + 1);
      }
      expect([0, 1, 2, 3].map((s) => counts.get(s))).toEqual([4, 4, 4, 4]);
    }
    // different runs start at different shards, so runs of one child do not all queue on one
    const firsts = new Set(Array.from({ length: 50 }, (_, r) => shardOf(`run-${r}/task-1`, 4)));
    expect(firsts.size).toBe(4);
  });
});
