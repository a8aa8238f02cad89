// `/workflow review`: capture the git diff, build review packets and run `scoped-review`.
import { execFile } from 'node:child_process';
import type { HostAgent } from '@wf/dsh-adapter';
import type { CommandResult } from './host-context.js';
import { runText } from './run-text.js';
import type { WorkflowService } from './service.js';

export interface ReviewRunner {
  run(
    agent: HostAgent,
    words: readonly string[],
    options: { wait: boolean; signal: AbortSignal },
  ): Promise<CommandResult>;
}

export function gitText(
  cwd: string,
  args: readonly string[],
): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  return new Promise((done) => {
    execFile(
      'git',
      ['-C', cwd, ...args],
      { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) =>
        done(
          error
            ? { ok: false, message: String(stderr || error.message).trim() }
            : { ok: true, text: String(stdout) },
        ),
    );
  });
}

/** Which diff a review covers: the working tree (default), a base branch, or one commit. */
export async function captureDiff(
  cwd: string,
  words: readonly string[],
): Promise<{ ok: true; diff: string; range: string } | { ok: false; message: string }> {
  if (words[0] === 'sha') {
    const sha = words[1];
    if (!sha || !/^[0-9a-f]{4,40}$/i.test(sha))
      return { ok: false, message: 'usage: /workflow review sha <hash>' };
    const out = await gitText(cwd, ['show', '--format=', '--binary', sha]);
    return out.ok ? { ok: true, diff: out.text, range: sha } : out;
  }
  if (words[0] === 'base') {
    for (const base of ['main', 'master', 'develop']) {
      const exists = await gitText(cwd, ['rev-parse', '--verify', '--quiet', base]);
      if (!exists.ok) continue;
      const out = await gitText(cwd, ['diff', `${base}...HEAD`]);
      return out.ok ? { ok: true, diff: out.text, range: `${base}...HEAD` } : out;
    }
    return { ok: false, message: 'no main, master or develop branch to diff against' };
  }
  const out = await gitText(cwd, ['diff', 'HEAD']);
  return out.ok ? { ok: true, diff: out.text, range: 'HEAD' } : out;
}

export function createReviewRunner(service: WorkflowService): ReviewRunner {
  return {
    async run(agent, words, { wait, signal }) {
      const cwd = agent.session.header.cwd ?? process.cwd();
      const diff = await captureDiff(cwd, words);
      if (!diff.ok) return { kind: 'error', text: `review: ${diff.message}` };
      if (diff.diff.trim() === '')
        return { kind: 'success', text: `review: no changes in ${diff.range}` };
      const out = await service.startReview(agent, diff.diff, diff.range, { wait, signal });
      if (!out.ok) return { kind: 'error', text: `${out.error.code}: ${out.error.message}` };
      return {
        kind: 'success',
        text: `Review of ${diff.range}: ${runText(out.reply, service.config.maxResultChars)}`,
      };
    },
  };
}
