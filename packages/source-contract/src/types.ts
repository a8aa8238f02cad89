// Public shapes of the source contract (docs/design.md#pinned-api; `hint`, `severity`,
// `profile` and the caps are additions).

/**
 * One finding. `line` is 1-based; `column` is 1-based too, counted in UTF-16 code units (the
 * way editors and `file:line:col` compiler output count), so `1:1` is the first character.
 */
export interface Diagnostic {
  code: string;
  severity: 'error' | 'warning';
  message: string;
  /** One line telling the author (usually a model) how to repair the source. */
  hint: string;
  line: number;
  column: number;
}

/** `default`: lint findings are warnings. `authoring`: lint findings are errors too. */
export type CheckProfile = 'default' | 'authoring';

export interface CheckOptions {
  /** The file the source came from. Accepted so callers can pass it; diagnostics do not repeat it. */
  filename?: string;
  profile?: CheckProfile;
  /** Size cap in UTF-8 bytes. Default 524288 (512 KiB). */
  maxBytes?: number;
  /** Bracket nesting cap (`(`, `[`, `{`, `${`). Default 200. */
  maxDepth?: number;
}

export type CheckResult =
  | { ok: true; warnings: Diagnostic[] }
  | { ok: false; errors: Diagnostic[]; warnings: Diagnostic[] };

export const DEFAULT_MAX_BYTES = 512 * 1024;
export const DEFAULT_MAX_DEPTH = 200;
