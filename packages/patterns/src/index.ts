// @wf/patterns: the trusted-package workflows (six patterns and two built-ins) as capsules, and the
// pure review-packet builder the scoped-review built-in consumes.
export { PATTERNS_ERROR_CODES, PatternsError, type PatternsErrorCode } from './errors.js';
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
