// A light entry (`@wf/patterns/shipped-index`): what `wf list` shows of each shipped workflow, so
// listing never loads the capsules, their embedded sources, the bridge or its schemas. The data is
// generated from the capsules (scripts/generate-index.mjs); a test fails when it is stale, and
// `valid` is parseCapsule's verdict on the capsule at generation time.
import { SHIPPED_INDEX_DATA } from './internal/shipped-index.generated.js';

export interface ShippedIndexEntry {
  readonly name: string;
  /** Built-ins come first, then patterns: the precedence names resolve with. */
  readonly scope: 'built-in' | 'pattern';
  readonly trust: 'trusted-package';
  readonly valid: boolean;
  /** Why the capsule is invalid (never the case for a released package). */
  readonly error?: string;
  readonly description: string;
  readonly inputSchema?: unknown;
  /** The capsule's first example args. */
  readonly example?: unknown;
}

/** Every shipped workflow, built-ins first, in `BUILT_INS` then `PATTERNS` order. */
export const SHIPPED_INDEX: readonly ShippedIndexEntry[] = SHIPPED_INDEX_DATA;
