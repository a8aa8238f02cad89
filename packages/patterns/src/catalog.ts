// The shipped catalogue: the six patterns (the vocabulary of manifest.patterns) and the built-ins.
import type { WorkflowCapsule } from '@wf/bridge';
import { adversarialVerification } from './capsules/adversarial-verification.js';
import { classifyAndAct } from './capsules/classify-and-act.js';
import { fanOutAndSynthesize } from './capsules/fan-out-and-synthesize.js';
import { generateAndFilter } from './capsules/generate-and-filter.js';
import { loopUntilDone } from './capsules/loop-until-done.js';
import { parallelInvestigation } from './capsules/parallel-investigation.js';
import { scopedReview } from './capsules/scoped-review.js';
import { tournament } from './capsules/tournament.js';

/** The six orchestration patterns, in the order of PATTERN_IDS. */
export const PATTERNS: readonly WorkflowCapsule[] = Object.freeze([
  classifyAndAct,
  fanOutAndSynthesize,
  adversarialVerification,
  generateAndFilter,
  tournament,
  loopUntilDone,
]);

/** The built-in workflows (resolved before patterns, project and personal workflows). */
export const BUILT_INS: readonly WorkflowCapsule[] = Object.freeze([
  parallelInvestigation,
  scopedReview,
]);

/** Every shipped workflow: built-ins first, then patterns (the resolver's precedence). */
export const SHIPPED_WORKFLOWS: readonly WorkflowCapsule[] = Object.freeze([
  ...BUILT_INS,
  ...PATTERNS,
]);

/** The shipped workflow with this manifest name, or undefined. */
export function findShippedWorkflow(name: string): WorkflowCapsule | undefined {
  return SHIPPED_WORKFLOWS.find((c) => c.manifest.name === name);
}
