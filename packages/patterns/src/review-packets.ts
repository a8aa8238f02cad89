// The review-packet builder: a unified diff in, immutable review packets out (one file's diff split
// per file, grouped by area and category, each packet within a size budget, content-addressed).
// Pure: no I/O, no clock, no randomness; the same diff and options give byte-identical packets.
import { createHash } from 'node:crypto';
import { PATTERNS_ERROR_CODES, type PatternsErrorCode } from './errors.js';
import { type DiffWarning, type FileChange, parseUnifiedDiff } from './internal/diff-parse.js';
import { globToRegExp, type PathCategory } from './internal/paths.js';
import {
  chunkFile,
  type RenderedFile,
  type ResolvedOptions,
  renderFile,
  utf8Bytes,
} from './review-packet-render.js';

export type { DiffWarning, FileChange, PathCategory };
export { LINE_CONTINUATION_MARKER } from './review-packet-render.js';

/** Paths that make a packet high-risk (a second, deep reviewer) unless `highRiskPaths` is given. */
export const DEFAULT_HIGH_RISK_PATHS: readonly string[] = Object.freeze([
  '**/*auth*',
  '**/*auth*/**',
  '**/*secur*',
  '**/*secur*/**',
  '**/*crypt*',
  '**/*secret*',
  '**/*password*',
  '**/*credential*',
  '**/*permission*',
  '**/*sandbox*/**',
  '**/*sandbox*',
  '**/migrations/**',
  '.github/workflows/**',
]);

/** Top-level directories whose second segment names a workspace (`packages/engine`). */
export const DEFAULT_WORKSPACE_GROUPS: readonly string[] = Object.freeze([
  'packages',
  'apps',
  'tooling',
  'tests',
  'libs',
  'services',
  'crates',
  'modules',
  'plugins',
]);

export interface ReviewPacketOptions {
  /** UTF-8 bytes of diff text per packet (default 51,200). */
  readonly maxPacketBytes?: number;
  /** Lines of diff text per packet (default 2,000). */
  readonly maxPacketLines?: number;
  /** Characters per diff line; longer lines are split with continuation markers (default 2,000). */
  readonly maxLineChars?: number;
  /** Files per packet (default 25). */
  readonly maxFilesPerPacket?: number;
  /** A file whose diff is larger than this keeps only its header; its hunks are left out (default 1 MiB). */
  readonly maxFileBytes?: number;
  /** `high` makes every packet high-risk (the caller knows the change is sensitive). */
  readonly routingRisk?: 'normal' | 'high';
  /** Path globs (`**`, `*`, `?`) that make a file's packet high-risk. */
  readonly highRiskPaths?: readonly string[];
  readonly workspaceGroups?: readonly string[];
}

export interface ReviewPacketFile {
  /** The new path, or the old one for a deletion. */
  readonly path: string;
  /** Set for renames and copies. */
  readonly oldPath?: string;
  readonly change: FileChange;
  readonly binary: boolean;
  readonly oldMode?: string;
  readonly newMode?: string;
  readonly similarity?: number;
  readonly additions: number;
  readonly deletions: number;
  /** Present when the file's hunks were left out of every packet. */
  readonly omitted?: { readonly reason: 'too-large'; readonly bytes: number };
  /** Lines of this file that were split because they exceeded `maxLineChars`. */
  readonly longLines: number;
}

export interface ReviewPacket {
  /** `pkt-` + 16 hex of the SHA-256 of the packet's content: same content, same id. */
  readonly id: string;
  /** `rng-` + 16 hex of the SHA-256 of the whole diff text. */
  readonly rangeId: string;
  /** 0-based position in the range. */
  readonly index: number;
  /** `<area>/<category>`, e.g. `packages/engine/source`. */
  readonly partition: string;
  readonly area: string;
  readonly category: PathCategory;
  readonly risk: 'normal' | 'high';
  readonly riskReasons: readonly string[];
  readonly files: readonly ReviewPacketFile[];
  /** Set when one file's diff was split over several packets (1-based). */
  readonly chunk?: { readonly index: number; readonly count: number };
  /** The packet's diff text, ending in a newline. */
  readonly diff: string;
  readonly bytes: number;
  readonly lines: number;
  /** True only when a single file header alone exceeds the budget (pathological options). */
  readonly oversize: boolean;
}

export interface ReviewFileSummary extends ReviewPacketFile {
  readonly area: string;
  readonly category: PathCategory;
  readonly risk: 'normal' | 'high';
  /** The packets holding this file's diff, in order. */
  readonly packetIds: readonly string[];
}

export type BuildReviewPacketsResult =
  | {
      readonly ok: true;
      readonly rangeId: string;
      readonly packets: readonly ReviewPacket[];
      readonly files: readonly ReviewFileSummary[];
      /**
       * Text outside every file section, in order: a `git show` / `git log -p` commit header, a
       * `git format-patch` email header and signature. Not part of any packet.
       */
      readonly preamble: string;
      readonly warnings: readonly DiffWarning[];
    }
  | {
      readonly ok: false;
      readonly error: {
        readonly code: PatternsErrorCode;
        readonly message: string;
        readonly line?: number;
      };
    };

const INTEGER_OPTIONS = {
  maxPacketBytes: { def: 51_200, min: 4_096, max: 16_777_216 },
  maxPacketLines: { def: 2_000, min: 50, max: 1_000_000 },
  maxLineChars: { def: 2_000, min: 80, max: 1_000_000 },
  maxFilesPerPacket: { def: 25, min: 1, max: 10_000 },
  maxFileBytes: { def: 1_048_576, min: 1_024, max: 1_073_741_824 },
} as const;

function resolveOptions(options: unknown): ResolvedOptions | string {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return 'options must be an object';
  }
  const o = options as Record<string, unknown>;
  const known = new Set([
    ...Object.keys(INTEGER_OPTIONS),
    'routingRisk',
    'highRiskPaths',
    'workspaceGroups',
  ]);
  for (const key of Object.keys(o)) {
    if (!known.has(key)) return `options.${key} is not a known option`;
  }
  const out: Partial<ResolvedOptions> = {};
  for (const [key, spec] of Object.entries(INTEGER_OPTIONS)) {
    const v = o[key] ?? spec.def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < spec.min || v > spec.max) {
      return `options.${key} must be an integer from ${spec.min} to ${spec.max} (got ${JSON.stringify(v)})`;
    }
    (out as Record<string, number>)[key] = v;
  }
  const risk = o.routingRisk ?? 'normal';
  if (risk !== 'normal' && risk !== 'high') {
    return `options.routingRisk must be "normal" or "high" (got ${JSON.stringify(risk)})`;
  }
  const globs = o.highRiskPaths ?? DEFAULT_HIGH_RISK_PATHS;
  if (!Array.isArray(globs) || !globs.every((g) => typeof g === 'string' && g.length > 0)) {
    return 'options.highRiskPaths must be an array of non-empty path globs';
  }
  const groups = o.workspaceGroups ?? DEFAULT_WORKSPACE_GROUPS;
  if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string' && /^[^/]+$/.test(g))) {
    return 'options.workspaceGroups must be an array of top-level directory names';
  }
  return {
    ...(out as Pick<ResolvedOptions, keyof typeof INTEGER_OPTIONS>),
    routingRisk: risk,
    highRisk: (globs as string[]).map((glob) => ({ glob, re: globToRegExp(glob) })),
    workspaceGroups: groups as string[],
  };
}

const sha16 = (text: string): string =>
  createHash('sha256').update(text).digest('hex').slice(0, 16);

interface Draft {
  area: string;
  category: PathCategory;
  files: RenderedFile[];
  /** Text pieces, concatenated once per packet. */
  texts: string[];
  lines: number;
  bytes: number;
  chunk?: { index: number; count: number };
  oversize: boolean;
}

/** Turns the text of a unified diff into review packets. Pure and deterministic. */
export function buildReviewPackets(
  diff: string,
  options?: ReviewPacketOptions,
): BuildReviewPacketsResult {
  const fail = (code: PatternsErrorCode, message: string, line?: number) =>
    ({ ok: false, error: { code, message, ...(line !== undefined ? { line } : {}) } }) as const;
  if (typeof diff !== 'string') {
    return fail(
      PATTERNS_ERROR_CODES.WF_PATTERNS_OPTIONS_INVALID,
      `diff must be a string (got ${typeof diff})`,
    );
  }
  const o = resolveOptions(options);
  if (typeof o === 'string') return fail(PATTERNS_ERROR_CODES.WF_PATTERNS_OPTIONS_INVALID, o);
  const parsed = parseUnifiedDiff(diff);
  if (!parsed.ok) {
    return fail(
      parsed.unrecognised
        ? PATTERNS_ERROR_CODES.WF_PATTERNS_DIFF_UNRECOGNISED
        : PATTERNS_ERROR_CODES.WF_PATTERNS_DIFF_MALFORMED,
      `diff line ${parsed.line}: ${parsed.message}`,
      parsed.line,
    );
  }
  const rangeId = `rng-${sha16(diff)}`;
  const rendered = parsed.files.map((f) => renderFile(f, o));

  // Partitions in order of first appearance; files keep their diff order inside a partition.
  const partitions = new Map<string, RenderedFile[]>();
  for (const f of rendered) {
    const key = `${f.area}/${f.category}`;
    const list = partitions.get(key) ?? [];
    list.push(f);
    partitions.set(key, list);
  }

  const drafts: Draft[] = [];
  for (const files of partitions.values()) {
    let current: Draft | null = null;
    for (const f of files) {
      if (f.bytes > o.maxPacketBytes || f.lines > o.maxPacketLines) {
        current = null;
        const pieces = chunkFile(f, o);
        pieces.forEach((p, k) => {
          drafts.push({
            area: f.area,
            category: f.category,
            files: [f],
            texts: [`${p.lines.join('\n')}\n`],
            lines: p.lines.length,
            bytes: 0,
            ...(pieces.length > 1 ? { chunk: { index: k + 1, count: pieces.length } } : {}),
            oversize: p.oversize,
          });
        });
        continue;
      }
      if (
        current === null ||
        current.files.length >= o.maxFilesPerPacket ||
        current.bytes + f.bytes > o.maxPacketBytes ||
        current.lines + f.lines > o.maxPacketLines
      ) {
        current = {
          area: f.area,
          category: f.category,
          files: [],
          texts: [],
          lines: 0,
          bytes: 0,
          oversize: false,
        };
        drafts.push(current);
      }
      current.files.push(f);
      current.texts.push(f.text);
      current.lines += f.lines;
      current.bytes += f.bytes;
    }
  }

  const packetIds = new Map<RenderedFile, string[]>();
  const packets: ReviewPacket[] = drafts.map((d, index) => {
    const text = d.texts.join('');
    const riskReasons = [
      ...new Set(d.files.flatMap((f) => f.riskReasons.map((r) => `${f.meta.path}: ${r}`))),
    ];
    const risk = riskReasons.length > 0 ? 'high' : 'normal';
    const partition = `${d.area}/${d.category}`;
    const files = d.files.map((f) => f.meta);
    // Content address: the packet's metadata, then its diff text (hashed as is, not re-encoded).
    const meta = JSON.stringify({ partition, risk, riskReasons, files, chunk: d.chunk ?? null });
    const id = `pkt-${createHash('sha256').update(meta).update('\n').update(text).digest('hex').slice(0, 16)}`;
    for (const f of d.files) {
      const list = packetIds.get(f) ?? [];
      list.push(id);
      packetIds.set(f, list);
    }
    return {
      id,
      rangeId,
      index,
      partition,
      area: d.area,
      category: d.category,
      risk,
      riskReasons,
      files,
      ...(d.chunk ? { chunk: d.chunk } : {}),
      diff: text,
      bytes: utf8Bytes(text),
      lines: d.lines,
      oversize: d.oversize,
    };
  });

  const files: ReviewFileSummary[] = rendered.map((f) => ({
    ...f.meta,
    area: f.area,
    category: f.category,
    risk: f.riskReasons.length > 0 ? 'high' : 'normal',
    packetIds: packetIds.get(f) ?? [],
  }));
  return {
    ok: true,
    rangeId,
    packets,
    files,
    preamble: parsed.preamble.length > 0 ? `${parsed.preamble.join('\n')}\n` : '',
    warnings: parsed.warnings,
  };
}
