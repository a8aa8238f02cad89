// The patterns package's error codes and its one error class. Expected outcomes (a diff that is not
// a diff, options out of range) are returned as data; the class is thrown only for I/O conflicts.
import { WfError } from '@wf/errors';

export const PATTERNS_ERROR_CODES = {
  /** `buildReviewPackets` got text that contains no unified-diff file section. */
  WF_PATTERNS_DIFF_UNRECOGNISED: 'WF_PATTERNS_DIFF_UNRECOGNISED',
  /** A file section of the diff is malformed beyond recovery (e.g. a hunk header that does not parse). */
  WF_PATTERNS_DIFF_MALFORMED: 'WF_PATTERNS_DIFF_MALFORMED',
  /** `buildReviewPackets` / `writeReviewPackets` options are out of range or of the wrong type. */
  WF_PATTERNS_OPTIONS_INVALID: 'WF_PATTERNS_OPTIONS_INVALID',
  /** `writeReviewPackets` found a different file where a content-addressed packet belongs. */
  WF_PATTERNS_PACKET_CONFLICT: 'WF_PATTERNS_PACKET_CONFLICT',
} as const;

export type PatternsErrorCode = (typeof PATTERNS_ERROR_CODES)[keyof typeof PATTERNS_ERROR_CODES];

/** Thrown only for I/O conflicts; `PatternsError.is` recognises it across copies and realms. */
export class PatternsError extends WfError<PatternsErrorCode> {
  static override readonly brand: string = '@wf/patterns';
}
