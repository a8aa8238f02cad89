// The packet builder on diffs produced by real git in temp repositories: renames, copies, binary
// files (with and without --binary), mode changes, deletions, new files, quoted paths, CRLF, huge
// files, very long lines, `git show` preambles and merge (combined) diffs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildReviewPackets,
  LINE_CONTINUATION_MARKER,
  type ReviewPacket,
  type ReviewPacketOptions,
} from '../src/index.js';
import { createGitRepo, type GitRepo } from './helpers/git-repo.js';

const lines = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag} line ${i}`).join('\n') + '\n';

function build(diff: string, options?: ReviewPacketOptions) {
  const result = buildReviewPackets(diff, options);
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result;
}

/** Sections of a git diff, one per `diff --git` line, keyed by the order they appear. */
function sections(diff: string): string[] {
  const out: string[] = [];
  for (const line of diff.split('\n').slice(0, -1)) {
    if (line.startsWith('diff --git ')) out.push('');
    out[out.length - 1] += `${line}\n`;
  }
  return out;
}

function assertWithinBudget(packets: readonly ReviewPacket[], options: ReviewPacketOptions) {
  for (const p of packets) {
    expect(p.oversize).toBe(false);
    expect(p.bytes).toBe(Buffer.byteLength(p.diff));
    expect(p.bytes).toBeLessThanOrEqual(options.maxPacketBytes ?? 51_200);
    expect(p.lines).toBeLessThanOrEqual(options.maxPacketLines ?? 2_000);
    for (const l of p.diff.split('\n')) {
      // A split piece may carry the diff prefix and the continuation marker on top of the limit.
      expect(l.length).toBeLessThanOrEqual((options.maxLineChars ?? 2_000) + 2);
    }
  }
}

describe('a mixed change from real git', () => {
  let repo: GitRepo;
  let diff: string;
  let binaryDiff: string;
  let numstat: Map<string, { add: number; del: number }>;

  beforeAll(() => {
    repo = createGitRepo();
    repo.write('packages/engine/src/run.ts', lines(40, 'run'));
    repo.write('packages/engine/src/old-name.ts', lines(30, 'old'));
    repo.write('packages/engine/src/template.ts', lines(30, 'template'));
    repo.write('packages/engine/test/run.test.ts', lines(10, 'test'));
    repo.write('docs/guide.md', '# Guide\n');
    repo.write('scripts/deploy.sh', '#!/bin/sh\necho hi\n');
    repo.write('assets/logo.png', new Uint8Array([137, 80, 78, 71, 0, 1, 2, 3, 255, 0]));
    repo.write('gone.txt', 'bye\n');
    repo.write('src/auth/session.ts', lines(12, 'session'));
    repo.write('dashes.txt', '--- not a header\nkeep\n');
    repo.commitAll('init');

    repo.write(
      'packages/engine/src/run.ts',
      lines(40, 'run').replace('run line 5\n', 'run line five\n'),
    );
    repo.remove('packages/engine/src/old-name.ts');
    repo.write(
      'packages/engine/src/new-name.ts',
      lines(30, 'old').replace('old line 3\n', 'old line three\n'),
    );
    repo.write('packages/engine/src/copy.ts', lines(30, 'template'));
    repo.write('packages/engine/test/run.test.ts', lines(12, 'test'));
    repo.write('docs/guide.md', '# Guide\n\nMore.');
    repo.chmod('scripts/deploy.sh', 0o755);
    repo.write('assets/logo.png', new Uint8Array([137, 80, 78, 71, 9, 9, 9, 0, 255]));
    repo.remove('gone.txt');
    repo.write('src/café é.ts', 'export const x = 1;\n');
    repo.write('my dir/with space.txt', 'hello');
    repo.write('crlf.txt', 'a\r\nb\r\n');
    repo.write(
      'src/auth/session.ts',
      lines(12, 'session').replace('session line 2', 'session line two'),
    );
    // A removed line that itself reads "--- ..." must not be taken for a file header.
    repo.write('dashes.txt', 'keep\n');
    repo.git('add', '-A');
    diff = repo.git('diff', '--cached', '-M', '-C', '--find-copies-harder');
    binaryDiff = repo.git('diff', '--cached', '-M', '--binary');
    numstat = new Map();
    const tokens = repo
      .git('diff', '--cached', '-M', '-C', '--find-copies-harder', '--numstat', '-z')
      .split('\0');
    for (let i = 0; i < tokens.length; i += 1) {
      // -z numstat: "add\tdel\tpath" or, for renames/copies, "add\tdel\t" then old and new paths.
      const m = /^(\d+|-)\t(\d+|-)\t(.*)$/.exec(tokens[i] as string);
      if (!m) continue;
      let path = m[3] as string;
      if (path === '') {
        path = tokens[i + 2] as string;
        i += 2;
      }
      numstat.set(path, { add: Number(m[1]) || 0, del: Number(m[2]) || 0 });
    }
  });
  afterAll(() => repo.cleanup());

  it('records every file with its change kind, paths and modes', () => {
    const r = build(diff);
    const byPath = new Map(r.files.map((f) => [f.path, f]));
    expect(byPath.get('packages/engine/src/new-name.ts')).toMatchObject({
      change: 'renamed',
      oldPath: 'packages/engine/src/old-name.ts',
      similarity: 95,
      additions: 1,
      deletions: 1,
    });
    expect(byPath.get('packages/engine/src/copy.ts')).toMatchObject({
      change: 'copied',
      oldPath: 'packages/engine/src/template.ts',
      similarity: 100,
    });
    expect(byPath.get('gone.txt')).toMatchObject({
      change: 'deleted',
      oldMode: '100644',
      deletions: 1,
    });
    expect(byPath.get('scripts/deploy.sh')).toMatchObject({
      change: 'modified',
      oldMode: '100644',
      newMode: '100755',
      additions: 0,
      deletions: 0,
    });
    expect(byPath.get('assets/logo.png')).toMatchObject({ binary: true, change: 'modified' });
    expect(byPath.get('src/café é.ts')).toMatchObject({ change: 'added', newMode: '100644' });
    expect(byPath.get('my dir/with space.txt')).toMatchObject({ change: 'added', additions: 1 });
    expect(byPath.get('dashes.txt')).toMatchObject({ additions: 0, deletions: 1 });
    expect(r.files).toHaveLength(13);
    expect(r.warnings).toEqual([]);
  });

  it('counts additions and deletions exactly as git --numstat does', () => {
    const r = build(diff);
    for (const f of r.files) {
      if (f.binary) continue;
      const stat = numstat.get(f.path);
      expect(stat, f.path).toBeDefined();
      expect({ path: f.path, add: f.additions, del: f.deletions }).toEqual({
        path: f.path,
        add: stat?.add,
        del: stat?.del,
      });
    }
  });

  it('keeps each file section byte for byte, in packets grouped by area and category', () => {
    const r = build(diff);
    const original = sections(diff);
    // Each packet's text is exactly the concatenation of its files' original sections.
    const remaining = new Set(original);
    for (const p of r.packets) {
      let rest = p.diff;
      for (const _ of p.files) {
        const match = [...remaining].find((s) => rest.startsWith(s));
        expect(match, `packet ${p.id} does not start with an original section`).toBeDefined();
        rest = rest.slice((match as string).length);
        remaining.delete(match as string);
      }
      expect(rest).toBe('');
    }
    expect(remaining.size).toBe(0);
    const partitions = r.packets.map((p) => p.partition);
    expect(partitions).toContain('packages/engine/source');
    expect(partitions).toContain('packages/engine/tests');
    expect(partitions).toContain('docs/docs');
    expect(new Set(partitions).size).toBe(partitions.length);
    for (const p of r.packets)
      for (const f of p.files)
        expect(r.files.find((x) => x.path === f.path)?.packetIds).toEqual([p.id]);
  });

  it('produces packets git itself can apply to the base', () => {
    const r = build(diff);
    const dir = mkdtempSync(join(tmpdir(), 'wf-patterns-apply-'));
    const base = join(dir, 'base');
    repo.git('worktree', 'add', '-q', '--detach', base, 'HEAD');
    try {
      const applicable = r.packets.filter((x) => x.files.every((f) => !f.binary));
      expect(applicable.length).toBe(r.packets.length - 1);
      for (const p of applicable) {
        const file = join(dir, `${p.id}.diff`);
        writeFileSync(file, p.diff);
        // Each packet stands on its own: it applies to the base checkout by itself.
        expect(() => repo.git('-C', base, 'apply', '--check', file), p.partition).not.toThrow();
      }
    } finally {
      repo.git('worktree', 'remove', '--force', base);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('drops the base85 payload of a --binary patch but keeps its header and a note', () => {
    const r = build(binaryDiff);
    const p = r.packets.find((x) => x.files.some((f) => f.path === 'assets/logo.png'));
    expect(p?.diff).toContain('GIT binary patch');
    expect(p?.diff).toMatch(/# binary patch payload omitted \(\d+ base85 lines\)/);
    expect(p?.diff).not.toContain('literal 9');
    expect(r.files.find((f) => f.path === 'assets/logo.png')?.binary).toBe(true);
    expect(
      build(diff).packets.find((x) => x.files.some((f) => f.path === 'assets/logo.png'))?.diff,
    ).toContain('Binary files a/assets/logo.png and b/assets/logo.png differ');
  });

  it('marks packets high-risk by path pattern or routing risk', () => {
    const r = build(diff);
    const auth = r.packets.find((p) => p.files.some((f) => f.path === 'src/auth/session.ts'));
    expect(auth?.risk).toBe('high');
    expect(auth?.riskReasons.join(' ')).toContain('src/auth/session.ts: path matches');
    expect(r.packets.filter((p) => p.risk === 'high')).toHaveLength(1);
    expect(build(diff, { routingRisk: 'high' }).packets.every((p) => p.risk === 'high')).toBe(true);
    const custom = build(diff, { highRiskPaths: ['docs/**'] });
    expect(custom.packets.filter((p) => p.risk === 'high').map((p) => p.partition)).toEqual([
      'docs/docs',
    ]);
  });

  it('is deterministic and content-addressed', () => {
    const a = build(diff);
    const b = build(diff);
    expect(b).toEqual(a);
    expect(new Set(a.packets.map((p) => p.id)).size).toBe(a.packets.length);
    // Change one file: only the packet holding it gets a new id; the range id changes.
    repo.write('docs/guide.md', '# Guide\n\nMore, changed.');
    repo.git('add', '-A');
    const c = build(repo.git('diff', '--cached', '-M', '-C', '--find-copies-harder'));
    expect(c.rangeId).not.toBe(a.rangeId);
    const changed = c.packets.filter((p) => !a.packets.some((q) => q.id === p.id));
    expect(changed.map((p) => p.partition)).toEqual(['docs/docs']);
    repo.write('docs/guide.md', '# Guide\n\nMore.');
    repo.git('add', '-A');
  });

  it('splits packets by file count within a partition', () => {
    const r = build(diff, { maxFilesPerPacket: 1 });
    expect(r.packets).toHaveLength(r.files.length);
    expect(r.packets.every((p) => p.files.length === 1)).toBe(true);
  });
});

describe('huge files and very long lines', () => {
  let repo: GitRepo;
  beforeAll(() => {
    repo = createGitRepo();
    repo.write('keep.ts', 'export {};\n');
    repo.write('big/data.ts', lines(20_000, 'base'));
    repo.commitAll('init');
  });
  afterAll(() => repo.cleanup());

  it('leaves out the hunks of a file over maxFileBytes, keeping its header and stats', () => {
    repo.write('generated/huge.js', lines(120_000, 'generated'));
    repo.git('add', '-A');
    const diff = repo.git('diff', '--cached');
    repo.restore();
    expect(diff.length).toBeGreaterThan(2_000_000);
    const r = build(diff);
    const f = r.files.find((x) => x.path === 'generated/huge.js');
    expect(f?.omitted?.reason).toBe('too-large');
    expect(f?.omitted?.bytes).toBeGreaterThan(1_048_576);
    expect(f?.additions).toBe(120_000);
    const p = r.packets.find((x) => x.id === f?.packetIds[0]);
    expect(p?.diff).toContain('diff --git a/generated/huge.js b/generated/huge.js');
    expect(p?.diff).toMatch(
      /# diff omitted: \d+ bytes is over the 1048576-byte per-file limit \(\+120000 -0 lines\)/,
    );
    expect(p?.bytes).toBeLessThan(1_000);
  });

  it('splits a file larger than a packet into chunks with exact hunk ranges', () => {
    // Every 10th line changes: many hunks, about 300 KB of diff.
    const changed = lines(20_000, 'base')
      .split('\n')
      .map((l, i) => (i % 10 === 5 ? `${l} changed` : l))
      .join('\n');
    repo.write('big/data.ts', changed);
    repo.git('add', '-A');
    const diff = repo.git('diff', '--cached');
    repo.restore();
    const options = { maxPacketBytes: 40_000, maxPacketLines: 1_000 };
    const r = build(diff, options);
    const chunks = r.packets.filter((p) => p.files[0]?.path === 'big/data.ts');
    expect(chunks.length).toBeGreaterThan(8);
    chunks.forEach((p, i) => {
      expect(p.chunk).toEqual({ index: i + 1, count: chunks.length });
      expect(p.diff.startsWith('diff --git a/big/data.ts b/big/data.ts\nindex ')).toBe(true);
    });
    assertWithinBudget(r.packets, options);
    // Reassembled bodies equal the original hunk bodies, and every hunk header's ranges match
    // the lines under it (so a reviewer can cite line numbers from any chunk).
    const bodyOf = (text: string) =>
      text.split('\n').filter((l) => /^[ +\-\\]/.test(l) && !/^(---|\+\+\+) /.test(l));
    expect(chunks.flatMap((p) => bodyOf(p.diff))).toEqual(bodyOf(sections(diff)[0] as string));
    for (const p of chunks) checkHunkRanges(p.diff);
    expect(r.files.find((f) => f.path === 'big/data.ts')?.packetIds).toEqual(
      chunks.map((p) => p.id),
    );
  });

  it('splits a single hunk that is larger than a packet, numbering each part', () => {
    repo.write('big/new.ts', lines(6_000, 'fresh'));
    repo.git('add', '-A');
    const diff = repo.git('diff', '--cached');
    repo.restore();
    const options = { maxPacketBytes: 20_000 };
    const r = build(diff, options);
    const chunks = r.packets.filter((p) => p.files[0]?.path === 'big/new.ts');
    expect(chunks.length).toBeGreaterThan(4);
    const headers = chunks.map((p) => p.diff.split('\n').find((l) => l.startsWith('@@')));
    expect(headers[0]).toMatch(/^@@ -0,0 \+1,\d+ @@ \(part 1 of \d+\)$/);
    expect(headers[1]).toMatch(/^@@ -0,0 \+\d+,\d+ @@ \(part 2 of \d+\)$/);
    for (const p of chunks) checkHunkRanges(p.diff);
    const total = chunks.reduce(
      (n, p) => n + p.diff.split('\n').filter((l) => l.startsWith('+fresh')).length,
      0,
    );
    expect(total).toBe(6_000);
    assertWithinBudget(r.packets, options);
  });

  it('splits very long lines with continuation markers and loses no character', () => {
    const long = Array.from({ length: 9_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(
      '',
    );
    // Astral characters: a split never lands inside a surrogate pair.
    const emoji = '\u{1F600}'.repeat(1_500);
    repo.write('min/bundle.js', `${long}\nshort\n${emoji}\n`);
    repo.git('add', '-A');
    const diff = repo.git('diff', '--cached');
    repo.restore();
    const r = build(diff, { maxLineChars: 1_000 });
    const f = r.files.find((x) => x.path === 'min/bundle.js');
    expect(f?.longLines).toBe(2);
    const p = r.packets.find((x) => x.id === f?.packetIds[0]) as ReviewPacket;
    const body = p.diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
    expect(body.length).toBe(9 + 1 + 3);
    // Rejoin: drop the "+" prefix and, for continuation pieces, the marker.
    const rejoined: string[] = [];
    for (const l of body) {
      if (l.startsWith(`+${LINE_CONTINUATION_MARKER}`)) rejoined[rejoined.length - 1] += l.slice(2);
      else rejoined.push(l.slice(1));
    }
    expect(rejoined).toEqual([long, 'short', emoji]);
    for (const l of body) expect(l.length).toBeLessThanOrEqual(1_002);
    expect(body.some((l) => /[\ud800-\udbff]$/.test(l))).toBe(false);
  });

  it('keeps a single line longer than a packet within the budget by spreading it over chunks', () => {
    repo.write('min/one-line.js', `${'y'.repeat(300_000)}\n`);
    repo.git('add', '-A');
    const diff = repo.git('diff', '--cached');
    repo.restore();
    const options = { maxPacketBytes: 50_000 };
    const r = build(diff, options);
    const chunks = r.packets.filter((p) => p.files[0]?.path === 'min/one-line.js');
    expect(chunks.length).toBeGreaterThanOrEqual(6);
    assertWithinBudget(r.packets, options);
    const ys = chunks.reduce((n, p) => n + (p.diff.match(/y/g)?.length ?? 0), 0);
    expect(ys).toBe(300_000);
  });
});

describe('other producers of diffs', () => {
  let repo: GitRepo;
  beforeAll(() => {
    repo = createGitRepo();
    repo.write('a.txt', lines(5, 'a'));
    repo.commitAll('init');
  });
  afterAll(() => repo.cleanup());

  it('keeps the commit header of git show as the preamble', () => {
    repo.write('a.txt', lines(6, 'a'));
    repo.commitAll('add a line\n\n--- a dashed line in the message\n+++ and a plus one');
    const r = build(repo.git('show', 'HEAD'));
    expect(r.preamble).toMatch(/^commit [0-9a-f]{40}\nAuthor: Test <test@example\.invalid>/);
    expect(r.preamble).toContain('add a line');
    expect(r.files.map((f) => [f.path, f.additions])).toEqual([['a.txt', 1]]);
  });

  it('reads git log -p and a format-patch series, keeping commit headers out of the packets', () => {
    repo.write('log.txt', lines(20, 'log'));
    repo.commitAll('base for the series');
    repo.write('log.txt', lines(21, 'log'));
    repo.write('b.bin', new Uint8Array([0, 1, 2, 3]));
    repo.commitAll('second\n\nwith a body');
    repo.write('log.txt', lines(22, 'log'));
    repo.chmod('log.txt', 0o755);
    repo.commitAll('third');
    const cases = [
      // newest first
      [repo.git('log', '-p', '--binary', '-2'), ['log.txt', 'b.bin', 'log.txt']],
      // oldest first, as emails
      [repo.git('format-patch', '--stdout', '--binary', 'HEAD~2'), ['b.bin', 'log.txt', 'log.txt']],
    ] as const;
    for (const [text, paths] of cases) {
      const r = build(text);
      expect(r.warnings).toEqual([]);
      expect(r.files.map((f) => f.path)).toEqual(paths);
      expect(r.files.map((f) => [f.additions, f.deletions, f.binary])).toEqual(
        paths.map((p) => (p === 'b.bin' ? [0, 0, true] : [1, 0, false])),
      );
      expect(r.files.find((f) => f.newMode === '100755')?.path).toBe('log.txt');
      expect(r.preamble).toContain('third');
      expect(r.preamble).toContain('with a body');
      for (const p of r.packets) {
        expect(p.diff).not.toMatch(/^(commit [0-9a-f]{40}|From [0-9a-f]{40} |-- $)/m);
      }
    }
  });

  it('parses a merge commit shown as a combined diff', () => {
    repo.git('checkout', '-q', '-b', 'side');
    repo.write('a.txt', lines(6, 'a').replace('a line 0', 'side line 0'));
    repo.commitAll('side');
    repo.git('checkout', '-q', 'main');
    repo.write('a.txt', lines(6, 'a').replace('a line 0', 'main line 0'));
    repo.commitAll('main');
    try {
      repo.git('merge', '-q', 'side', '-m', 'merge');
    } catch {
      // Conflict expected: resolve by hand so the merge commit differs from both parents.
    }
    repo.write('a.txt', lines(6, 'a').replace('a line 0', 'merged line 0'));
    repo.commitAll('merge');
    const shown = repo.git('show', '--cc', 'HEAD');
    expect(shown).toContain('diff --cc a.txt');
    const r = build(shown);
    expect(r.files).toHaveLength(1);
    expect(r.files[0]).toMatchObject({ path: 'a.txt', change: 'modified' });
    expect(r.packets[0]?.diff).toContain('@@@ ');
    expect(r.warnings).toEqual([]);
  });

  it('reads mnemonic prefixes and unquoted non-ASCII paths', () => {
    repo.write('naïve.txt', 'x\n');
    repo.git('add', '-A');
    const diff = repo.git(
      '-c',
      'diff.mnemonicPrefix=true',
      '-c',
      'core.quotePath=false',
      'diff',
      '--cached',
    );
    repo.restore();
    expect(diff).toContain('diff --git c/naïve.txt i/naïve.txt');
    expect(build(diff).files.map((f) => f.path)).toEqual(['naïve.txt']);
  });

  it('reads a plain diff -u, where only hunk counts tell a removed "--- " line from a header', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-patterns-plain-'));
    try {
      writeFileSync(join(dir, 'old.txt'), '-- x\nkeep\n');
      writeFileSync(join(dir, 'new.txt'), 'keep\n+++ y\n');
      writeFileSync(join(dir, 'other-old.txt'), 'one\n');
      writeFileSync(join(dir, 'other-new.txt'), 'two\n');
      let out = '';
      for (const [a, b] of [
        ['old.txt', 'new.txt'],
        ['other-old.txt', 'other-new.txt'],
      ] as const) {
        try {
          execFileSync('diff', ['-u', a, b], { cwd: dir, encoding: 'utf8' });
        } catch (e) {
          out += (e as { stdout: string }).stdout; // diff exits 1 when files differ
        }
      }
      const r = build(out);
      expect(r.files.map((f) => [f.path, f.additions, f.deletions])).toEqual([
        ['new.txt', 1, 1],
        ['other-new.txt', 1, 1],
      ]);
      expect(r.warnings).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Every hunk header's ranges match the counted lines under it. */
function checkHunkRanges(text: string) {
  const all = text.split('\n');
  for (let i = 0; i < all.length; i += 1) {
    const m = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@/.exec(all[i] as string);
    if (!m) continue;
    let oldN = 0;
    let newN = 0;
    for (let j = i + 1; j < all.length && /^[ +\-\\]/.test(all[j] as string); j += 1) {
      const l = all[j] as string;
      if (l.slice(1, 2) === LINE_CONTINUATION_MARKER || l.startsWith('\\')) continue;
      if (l[0] === ' ' || l[0] === '-') oldN += 1;
      if (l[0] === ' ' || l[0] === '+') newN += 1;
    }
    expect([oldN, newN], all[i]).toEqual([Number(m[2]), Number(m[4])]);
  }
}
