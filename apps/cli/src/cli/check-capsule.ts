// The capsule half of `wf check`: full capsule validation (parseCapsule, every issue with its path),
// the capsule's own examples and any `--args` checked against its input schema, and the optional
// `--smoke` run (instant simulated agents, tight limits, the authoring contract) that proves a
// workflow works before anyone spends tokens on it.
import { basename } from 'node:path';
import {
  parseCapsule,
  validateArgs,
  type WorkflowCapsule,
  type WorkflowManifest,
} from '@wf/bridge';
import { defaultManifest } from './resolve.js';

export interface CapsuleIssue {
  readonly path: string;
  readonly message: string;
}

export interface SmokeReport {
  readonly ok: boolean;
  readonly status: string;
  readonly agentsStarted: number;
  readonly problems: readonly string[];
}

/** Validates a parsed `.workflow.json`; `args` (from --args) is checked against its input schema. */
export function checkCapsule(
  json: unknown,
  args: unknown,
): { issues: CapsuleIssue[]; capsule?: WorkflowCapsule } {
  const parsed = parseCapsule(json);
  if (!parsed.ok)
    return {
      issues: parsed.issues.map((i) => ({ path: i.path || 'capsule', message: i.message })),
    };
  const capsule = parsed.capsule;
  const issues: CapsuleIssue[] = [];
  // An example that does not fit the schema would fail the first run anyone tries.
  (capsule.inputs?.examples ?? []).forEach((example, n) => {
    for (const i of argIssues(capsule.manifest, example)) {
      issues.push({ path: `inputs.examples[${n}]`, message: i.message });
    }
  });
  if (args !== undefined) {
    for (const i of argIssues(capsule.manifest, args))
      issues.push({ path: '--args', message: i.message });
  }
  return { issues, capsule };
}

function argIssues(manifest: WorkflowManifest, args: unknown): CapsuleIssue[] {
  const checked = validateArgs(manifest, args);
  return checked.ok ? [] : checked.issues;
}

/** Runs the workflow once on instant simulated agents; the engine is loaded only for --smoke. */
export async function smokeWorkflow(
  file: string,
  source: string,
  capsule: WorkflowCapsule | undefined,
  args: unknown,
): Promise<SmokeReport> {
  const { smokeRun } = await import('@wf/engine');
  const name = basename(file)
    .replace(/(\.workflow)?\.(js|mjs|cjs)$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');
  const target = capsule ?? {
    manifest: defaultManifest(/^[a-z]/.test(name) ? name : `wf-${name}`, file),
    source,
  };
  const out = await smokeRun(target, args === undefined ? {} : { args });
  return {
    ok: out.ok,
    status: out.done.status,
    agentsStarted: out.stats.started,
    problems: [...out.problems],
  };
}
