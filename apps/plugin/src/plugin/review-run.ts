// `/workflow review` as a run: splits the diff into immutable review packets under
// `<cwd>/.dsh/review-packets/<rangeId>/` and runs the `scoped-review` built-in over them.
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { HostAgent } from '@wf/dsh-adapter';
import { buildReviewPackets, writeReviewPackets } from '@wf/patterns';
import { startRun } from './launch.js';
import { reviewPacketsRoot } from './project.js';
import { cwdOf, fail, type RunReply, type ServiceResult, type ServiceState } from './state.js';

export async function startReview(
  state: ServiceState,
  agent: HostAgent,
  diff: string,
  range: string,
  options: { wait: boolean; signal: AbortSignal },
): Promise<ServiceResult<{ reply: RunReply }>> {
  const shipped = [...state.shipped.builtIns, ...state.shipped.patterns];
  if (!shipped.some((c) => c.manifest.name === 'scoped-review'))
    return fail('WF_PLUGIN_NOT_FOUND', 'the scoped-review built-in is not available in this build');
  const built = buildReviewPackets(diff);
  if (!built.ok) return fail(built.error.code, `review: ${built.error.message}`);
  const cwd = cwdOf(agent);
  const root = reviewPacketsRoot(cwd);
  await mkdir(root, { recursive: true });
  const written = await writeReviewPackets(root, {
    rangeId: built.rangeId,
    packets: built.packets,
    files: built.files,
  });
  const base = `${resolve(cwd)}/`;
  const rel = (p: string) => (p.startsWith(base) ? p.slice(base.length) : p);
  return startRun(
    state,
    {
      name: 'scoped-review',
      // packets go by workspace path (read with wf.readFile), keeping the args small
      args: {
        packetFiles: written.packets.map((p) => rel(p.path)),
        request: `Review the change ${range}.`,
      },
      wait: options.wait,
    },
    { agent, signal: options.signal, preApproved: true },
  );
}
