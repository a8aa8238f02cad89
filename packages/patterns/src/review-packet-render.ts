// Rendering for the review-packet builder: one parsed file into its diff text (long lines split
// with a continuation marker, oversized diffs reduced to their header), and a file too large for
// one packet cut into pieces whose hunk headers carry each piece's own line ranges.
import { type ParsedFile, type ParsedHunk, optionalFileMeta } from './internal/diff-parse.js';
import { areaOf, categoryOf, type PathCategory } from './internal/paths.js';
import type { ReviewPacketFile } from './review-packets.js';

/** Marks the second and later pieces of a line longer than `maxLineChars`. */
export const LINE_CONTINUATION_MARKER = '\u21aa';

export interface ResolvedOptions {
  maxPacketBytes: number;
  maxPacketLines: number;
  maxLineChars: number;
  maxFilesPerPacket: number;
  maxFileBytes: number;
  routingRisk: 'normal' | 'high';
  highRisk: { glob: string; re: RegExp }[];
  workspaceGroups: readonly string[];
}

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Splits one diff line into pieces of at most `max` characters (never inside a surrogate pair). */
export function splitLongLine(line: string, prefixLength: number, max: number): string[] {
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

export interface RenderedFile {
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

export function renderFile(parsed: ParsedFile, o: ResolvedOptions): RenderedFile {
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
    ...optionalFileMeta(parsed),
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
export function chunkFile(
  f: RenderedFile,
  o: ResolvedOptions,
): { lines: string[]; oversize: boolean }[] {
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
