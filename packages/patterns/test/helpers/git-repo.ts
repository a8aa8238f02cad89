// Real git repositories in temp directories, for producing real diffs in tests.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface GitRepo {
  readonly dir: string;
  git(...args: string[]): string;
  write(path: string, content: string | Uint8Array): void;
  remove(path: string): void;
  chmod(path: string, mode: number): void;
  commitAll(message: string): void;
  /** Back to HEAD: drops staged and untracked changes. */
  restore(): void;
  cleanup(): void;
}

export function createGitRepo(): GitRepo {
  const dir = mkdtempSync(join(tmpdir(), 'wf-patterns-git-'));
  // A hermetic git: no user or system config, fixed identity and dates, default prefixes.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  };
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  git('init', '-q', '-b', 'main');
  git('config', 'core.autocrlf', 'false');
  return {
    dir,
    git,
    write(path, content) {
      const full = join(dir, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    },
    remove(path) {
      unlinkSync(join(dir, path));
    },
    chmod(path, mode) {
      chmodSync(join(dir, path), mode);
    },
    commitAll(message) {
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
    },
    restore() {
      git('reset', '-q', '--hard');
      git('clean', '-qfdx');
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
