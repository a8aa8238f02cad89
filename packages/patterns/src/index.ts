// @wf/patterns: the trusted-package workflows (six patterns and two built-ins) as capsules, and the
// pure review-packet builder the scoped-review built-in consumes.
export { adversarialVerification } from './capsules/adversarial-verification.js';
export { classifyAndAct } from './capsules/classify-and-act.js';
export { fanOutAndSynthesize } from './capsules/fan-out-and-synthesize.js';
export { generateAndFilter } from './capsules/generate-and-filter.js';
export { loopUntilDone } from './capsules/loop-until-done.js';
export { parallelInvestigation } from './capsules/parallel-investigation.js';
export { scopedReview } from './capsules/scoped-review.js';
export { tournament } from './capsules/tournament.js';
export { BUILT_INS, findShippedWorkflow, PATTERNS, SHIPPED_WORKFLOWS } from './catalog.js';
export { PATTERNS_ERROR_CODES, PatternsError, type PatternsErrorCode } from './errors.js';
export { MIN_DSH_VERSION } from './dsh-version.js';
export {
  type BuildReviewPacketsResult,
  buildReviewPackets,
  DEFAULT_HIGH_RISK_PATHS,
  DEFAULT_WORKSPACE_GROUPS,
  type DiffWarning,
  type FileChange,
  LINE_CONTINUATION_MARKER,
  type PathCategory,
  type ReviewFileSummary,
  type ReviewPacket,
  type ReviewPacketFile,
  type ReviewPacketOptions,
} from './review-packets.js';
export {
  type WriteReviewPacketsInput,
  type WrittenReviewPackets,
  writeReviewPackets,
} from './write-review-packets.js';
