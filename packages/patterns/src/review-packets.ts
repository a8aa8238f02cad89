// The review-packet builder: a unified diff in, immutable review packets out (one file's diff split
// per file, grouped by area and category, each packet within a size budget, content-addressed).
// Pure: no I/O, no clock, no randomness; the same diff and options give byte-identical packets.
import { createHash } from 'node:crypto';
import { PATTERNS_ERROR_CODES, type PatternsErrorCode } from './errors.js';
import {
  type DiffWarning,
  type FileChange,
  type ParsedFile,
  type ParsedHunk,
  parseUnifiedDiff,
} from './internal/diff-parse.js';
import { areaOf, categoryOf, globToRegExp, type PathCategory } from './internal/paths.js';

export type { DiffWarning, FileChange, PathCategory };

/** Marks the second and later pieces of a line longer than `maxLineChars`. */
export const LINE_CONTINUATION_MARKER = '\u21aa';

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

interface ResolvedOptions {
  maxPacketBytes: number;
  maxPacketLines: number;
  maxLineChars: number;
  maxFilesPerPacket: number;
  maxFileBytes: number;
  routingRisk: 'normal' | 'high';
  highRisk: { glob: string; re: RegExp }[];
  workspaceGroups: readonly string[];
}

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
const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Splits one diff line into pieces of at most `max` characters (never inside a surrogate pair). */
function splitLongLine(line: string, prefixLength: number, max: number): string[] {
  if (line.length <= max) return [line];
  const prefix = line.slice(0, prefixLength);
  const body = line.slice(prefixLength);
  const pieces: string[] = [];
  let at = 0;
  while (at < body.length) {
    let end = Math.min(at + max, body.length);
    const code = body.charCodeAt(end - 1);
    if (end < body.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
    const piece = body.slice(at, end);
    pieces.push(pieces.length === 0 ? prefix + piece : prefix + LINE_CONTINUATION_MARKER + piece);
    at = end;
  }
  return pieces;
}

/** One original hunk line with its rendered pieces and its place in the old/new files. */
interface BodyLine {
  readonly out: readonly string[];
  readonly kind: 'context' | 'add' | 'del' | 'marker';
  readonly oldNo: number;
  readonly newNo: number;
}

interface RenderedHunk {
  readonly hunk: ParsedHunk;
  readonly headerOut: readonly string[];
  readonly body: readonly BodyLine[];
}

interface RenderedFile {
  readonly parsed: ParsedFile;
  readonly meta: ReviewPacketFile;
  readonly area: string;
  readonly category: PathCategory;
  readonly riskReasons: string[];
  readonly headerOut: readonly string[];
  readonly hunks: () => readonly RenderedHunk[];
  readonly strayOut: readonly string[];
  /** The rendered file section, header first, each line ending in a newline. */
  readonly text: string;
  readonly lines: number;
  readonly bytes: number;
}

function prefixOf(hunk: ParsedHunk): number {
  // Combined hunks have one prefix column per parent (the header's @ count minus one).
  return hunk.combined ? Math.max(1, hunk.header.indexOf(' ') - 1) : 1;
}

/** A hunk's lines with their rendered pieces and their old/new line numbers. */
function renderHunk(hunk: ParsedHunk, o: ResolvedOptions): RenderedHunk {
  let oldNo = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
  let newNo = hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart;
  const prefix = prefixOf(hunk);
  const body: BodyLine[] = hunk.lines.map((line) => {
    const c = line[0];
    const kind: BodyLine['kind'] = hunk.combined
      ? 'context'
      : c === '+'
        ? 'add'
        : c === '-'
          ? 'del'
          : c === '\\'
            ? 'marker'
            : 'context';
    const entry: BodyLine = {
      out: splitLongLine(line, prefix, o.maxLineChars),
      kind,
      oldNo,
      newNo,
    };
    if (kind === 'context') {
      oldNo += 1;
      newNo += 1;
    } else if (kind === 'add') newNo += 1;
    else if (kind === 'del') oldNo += 1;
    return entry;
  });
  return { hunk, headerOut: splitLongLine(hunk.header, 0, o.maxLineChars), body };
}

function renderFile(parsed: ParsedFile, o: ResolvedOptions): RenderedFile {
  const path = (parsed.newPath ?? parsed.oldPath ?? '(unknown path)') as string;
  let longLines = 0;
  const split = (line: string, prefix: number): string[] => {
    const pieces = splitLongLine(line, prefix, o.maxLineChars);
    if (pieces.length > 1) longLines += 1;
    return pieces;
  };
  const headerOut = parsed.headerLines.flatMap((l) => split(l, 0));
  if (parsed.binaryPayloadLines > 0) {
    headerOut.push(`# binary patch payload omitted (${parsed.binaryPayloadLines} base85 lines)`);
  }
  // Exact UTF-8 size only when it matters: a UTF-16 unit is at most 3 bytes, so a file whose
  // character count is under a third of the limit is under it.
  let rawChars = 0;
  for (const h of parsed.hunks) {
    rawChars += h.header.length + 1;
    for (const l of h.lines) rawChars += l.length + 1;
  }
  for (const l of parsed.strayLines) rawChars += l.length + 1;
  const rawBytes =
    rawChars * 3 <= o.maxFileBytes
      ? rawChars
      : parsed.hunks.reduce(
          (n, h) => n + utf8Bytes(h.header) + 1 + h.lines.reduce((m, l) => m + utf8Bytes(l) + 1, 0),
          0,
        ) + parsed.strayLines.reduce((n, l) => n + utf8Bytes(l) + 1, 0);
  const tooLarge = rawBytes > o.maxFileBytes;
  let strayOut: string[] = [];
  // Every rendered line once, in order (pushed, not spread: diffs can have millions of lines).
  const all: string[] = [];
  const add = (line: string) => {
    all.push(line);
  };
  for (const l of headerOut) add(l);
  if (tooLarge) {
    const note = `# diff omitted: ${rawBytes} bytes is over the ${o.maxFileBytes}-byte per-file limit (+${parsed.additions} -${parsed.deletions} lines)`;
    headerOut.push(note);
    add(note);
  } else {
    for (const hunk of parsed.hunks) {
      for (const l of split(hunk.header, 0)) add(l);
      const prefix = prefixOf(hunk);
      for (const line of hunk.lines) {
        if (line.length <= o.maxLineChars) add(line);
        else for (const piece of split(line, prefix)) add(piece);
      }
    }
    strayOut = parsed.strayLines.flatMap((l) => split(l, 0));
    for (const l of strayOut) add(l);
  }
  const text = all.length > 0 ? `${all.join('\n')}\n` : '';
  const riskReasons: string[] = [];
  const oldPath = parsed.oldPath;
  for (const { glob, re } of o.highRisk) {
    if (re.test(path) || (oldPath !== null && re.test(oldPath)))
      riskReasons.push(`path matches ${glob}`);
  }
  if (o.routingRisk === 'high') riskReasons.push('routing risk is high');
  const meta: ReviewPacketFile = {
    path,
    ...(parsed.oldPath !== null &&
    (parsed.change === 'renamed' || parsed.change === 'copied') &&
    parsed.oldPath !== path
      ? { oldPath: parsed.oldPath }
      : {}),
    change: parsed.change,
    binary: parsed.binary,
    ...(parsed.oldMode !== undefined ? { oldMode: parsed.oldMode } : {}),
    ...(parsed.newMode !== undefined ? { newMode: parsed.newMode } : {}),
    ...(parsed.similarity !== undefined ? { similarity: parsed.similarity } : {}),
    additions: parsed.additions,
    deletions: parsed.deletions,
    ...(tooLarge ? { omitted: { reason: 'too-large' as const, bytes: rawBytes } } : {}),
    longLines,
  };
  return {
    parsed,
    meta,
    area: areaOf(path, o.workspaceGroups),
    category: categoryOf(path),
    riskReasons,
    headerOut,
    // Line records are only needed to split a file over several packets.
    hunks: () => (tooLarge ? [] : parsed.hunks.map((h) => renderHunk(h, o))),
    strayOut,
    text,
    lines: all.length,
    bytes: utf8Bytes(text),
  };
}

/** One rendered line of a hunk body placed in a piece; `first` is false for continuation pieces. */
interface Item {
  readonly out: string;
  readonly rec: BodyLine;
  readonly first: boolean;
}

/** A hunk header for a piece of a split hunk, with the piece's own line ranges. */
function pieceHeader(h: ParsedHunk, items: readonly Item[], part: number, parts: number): string {
  const suffix = ` (part ${part} of ${parts})`;
  if (h.combined) return `${h.header}${suffix}`;
  const context = /^@@ [^@]* @@(.*)$/.exec(h.header)?.[1] ?? '';
  const counted = items.filter((i) => i.first);
  const oldCount = counted.filter((i) => i.rec.kind === 'context' || i.rec.kind === 'del').length;
  const newCount = counted.filter((i) => i.rec.kind === 'context' || i.rec.kind === 'add').length;
  const at = (counted[0] ?? items[0])?.rec;
  // git writes the line before the change as the start of an empty range.
  const oldStart = at ? (oldCount === 0 ? at.oldNo - 1 : at.oldNo) : h.oldStart;
  const newStart = at ? (newCount === 0 ? at.newNo - 1 : at.newNo) : h.newStart;
  return `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@${context}${suffix}`;
}

/** The pieces of one file larger than a packet; each piece repeats the file header. */
function chunkFile(f: RenderedFile, o: ResolvedOptions): { lines: string[]; oversize: boolean }[] {
  const sizeOf = (lines: readonly string[]) => lines.reduce((n, l) => n + utf8Bytes(l) + 1, 0);
  const headerBytes = sizeOf(f.headerOut);
  // Room a synthesized hunk header may take: the original plus the " (part k of n)" suffix.
  const reserveBytes = (h: RenderedHunk) => sizeOf(h.headerOut) + 64;
  type Segment = { h: RenderedHunk; items: Item[] };
  type Piece = { segments: Segment[]; oversize: boolean };
  const pieces: Piece[] = [];
  let piece: Piece = { segments: [], oversize: false };
  let bytes = headerBytes;
  let lines = f.headerOut.length;
  for (const h of f.hunks()) {
    let segment: Segment | null = null;
    const items: Item[] = h.body.flatMap((rec) =>
      rec.out.map((out, k) => ({ out, rec, first: k === 0 })),
    );
    for (const item of items) {
      const cost = utf8Bytes(item.out) + 1;
      const headBytes = segment ? 0 : reserveBytes(h);
      const headLines = segment ? 0 : h.headerOut.length;
      const over =
        bytes + headBytes + cost > o.maxPacketBytes || lines + headLines + 1 > o.maxPacketLines;
      if (over && piece.segments.length > 0) {
        pieces.push(piece);
        piece = { segments: [], oversize: false };
        bytes = headerBytes;
        lines = f.headerOut.length;
        segment = null;
      }
      if (segment === null) {
        segment = { h, items: [] };
        piece.segments.push(segment);
        bytes += reserveBytes(h);
        lines += h.headerOut.length;
      }
      // Only a header that alone exceeds the budget can leave a piece over it.
      if (bytes + cost > o.maxPacketBytes || lines + 1 > o.maxPacketLines) piece.oversize = true;
      segment.items.push(item);
      bytes += cost;
      lines += 1;
    }
  }
  if (piece.segments.length > 0 || pieces.length === 0) pieces.push(piece);
  const partsOf = new Map<RenderedHunk, number>();
  for (const p of pieces) for (const s of p.segments) partsOf.set(s.h, (partsOf.get(s.h) ?? 0) + 1);
  const seen = new Map<RenderedHunk, number>();
  const rendered = pieces.map((p) => {
    const out = [...f.headerOut];
    for (const s of p.segments) {
      const parts = partsOf.get(s.h) ?? 1;
      const part = (seen.get(s.h) ?? 0) + 1;
      seen.set(s.h, part);
      // A hunk that landed whole in one piece keeps its original header.
      if (parts === 1) out.push(...s.h.headerOut);
      else
        out.push(...splitLongLine(pieceHeader(s.h.hunk, s.items, part, parts), 0, o.maxLineChars));
      for (const item of s.items) out.push(item.out);
    }
    return { lines: out, oversize: p.oversize };
  });
  const last = rendered[rendered.length - 1];
  if (last && f.strayOut.length > 0) {
    last.lines.push(...f.strayOut);
    if (sizeOf(last.lines) > o.maxPacketBytes || last.lines.length > o.maxPacketLines) {
      last.oversize = true;
    }
  }
  return rendered;
}

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
