// Types for the generator, so tests can import it.
import type { ParseCapsuleResult, WorkflowCapsule } from '@wf/bridge';
import type { ShippedIndexEntry } from '../src/shipped-index.js';

export function shippedIndex(
  builtIns: readonly WorkflowCapsule[],
  patterns: readonly WorkflowCapsule[],
  parseCapsule: (json: unknown) => ParseCapsuleResult,
): ShippedIndexEntry[];
export function renderIndex(entries: readonly ShippedIndexEntry[]): string;
