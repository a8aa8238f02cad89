// The structural host types in src/host.ts against the REAL rc.8 `@deepseek-ai/*` contracts: the
// host's objects must be assignable to what we read, and what we pass must be what the host
// accepts. These are compile-time checks (the package typecheck runs them) plus runtime facts.
import type { Agent } from '@deepseek-ai/dsh-agent';
import type { JobHooks, JobRegistry, JobStart } from '@deepseek-ai/dsh-jobs';
import type { SandboxPolicyService } from '@deepseek-ai/dsh-sandbox-policy';
import { KNOWN_SESSION_EVENT_TYPES, type Session } from '@deepseek-ai/dsh-session';
import type { SubagentResult, SubagentRun, SubagentStartRequest } from '@deepseek-ai/dsh-subagent';
import type {
  ToolWorkflowAgentEndData,
  ToolWorkflowAgentStartData,
  ToolWorkflowRunEndData,
  ToolWorkflowRunStartData,
} from '@deepseek-ai/dsh-tool-workflow/types';
import type { ToolRuntime } from '@deepseek-ai/dsh-tools';
import type { ApprovalService } from '@deepseek-ai/dsh-user-approval';
import type { UserQuestionService } from '@deepseek-ai/dsh-user-questions';
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DSH_ERROR_CODES,
  type HostAgent,
  type HostApproval,
  type HostJobs,
  type HostSandboxPolicy,
  type HostSession,
  type HostSubagentResult,
  type HostSubagentRun,
  type HostSubagentStartRequest,
  type HostTools,
  type HostUserQuestions,
  NATIVE_EVENT_FIELDS,
  NATIVE_EVENT_TYPES,
} from '../src/index.js';
import { realSession } from './helpers.js';

describe('structural host types match the real rc.8 contracts', () => {
  it('host objects are assignable to what the adapter reads', () => {
    expectTypeOf<Session>().toMatchTypeOf<HostSession>();
    expectTypeOf<Agent>().toMatchTypeOf<HostAgent>();
    expectTypeOf<SubagentRun>().toMatchTypeOf<HostSubagentRun>();
    expectTypeOf<SubagentResult>().toMatchTypeOf<HostSubagentResult>();
    expectTypeOf<ApprovalService>().toMatchTypeOf<HostApproval>();
    expectTypeOf<UserQuestionService>().toMatchTypeOf<HostUserQuestions>();
    expectTypeOf<SandboxPolicyService>().toMatchTypeOf<HostSandboxPolicy>();
    expectTypeOf<ToolRuntime>().toMatchTypeOf<HostTools>();
    expectTypeOf<JobRegistry>().toMatchTypeOf<HostJobs>();
  });

  it('what the adapter passes is what the host accepts', () => {
    // A start request we build, with a real Agent as parent, is a valid SubagentStartRequest.
    // (outputSchema is passed through as the task gave it; DSH checks it is object-rooted and a
    // refusal surfaces as WF_DSH_LAUNCH_FAILED.)
    type Ours = Omit<HostSubagentStartRequest, 'parent' | 'toolFilter' | 'outputSchema'> & {
      parent: Agent;
      toolFilter?: { allow: string[] } | { deny: string[] };
    };
    const accepted = (ours: Ours): SubagentStartRequest => ours;
    expect(typeof accepted).toBe('function');
    // Our job hooks satisfy the host's JobHooks; our job spec's shape matches JobStart's keys.
    type OurRun = ReturnType<Parameters<HostJobs['start']>[0]['run']>;
    expectTypeOf<OurRun>().toMatchTypeOf<JobHooks>();
    expectTypeOf<keyof JobStart>().toEqualTypeOf<
      'kind' | 'label' | 'outputLimitBytes' | 'owner' | 'run'
    >();
  });

  it('the native event field lists are exactly the host schema (invariant 11)', () => {
    expectTypeOf<keyof ToolWorkflowRunStartData>().toEqualTypeOf<'runId' | 'name'>();
    expectTypeOf<keyof ToolWorkflowAgentStartData>().toEqualTypeOf<
      'runId' | 'seq' | 'label' | 'phase' | 'childId'
    >();
    expectTypeOf<keyof ToolWorkflowAgentEndData>().toEqualTypeOf<'runId' | 'seq' | 'outcome'>();
    expectTypeOf<keyof ToolWorkflowRunEndData>().toEqualTypeOf<'runId' | 'stopReason'>();
    expect(Object.keys(NATIVE_EVENT_FIELDS)).toEqual([...NATIVE_EVENT_TYPES]);
  });

  it('every type we append is one rc.8 persistence knows (resume-safety)', () => {
    for (const t of NATIVE_EVENT_TYPES) expect(KNOWN_SESSION_EVENT_TYPES.has(t)).toBe(true);
  });

  it('an rc.8 Session has `events` and no `snapshotEvents` (the accessor drift we detect)', () => {
    const s = realSession();
    expect(Array.isArray(s.events)).toBe(true);
    expect('snapshotEvents' in s).toBe(false);
  });
});

describe('error codes', () => {
  it('every code has its page in docs/errors', () => {
    for (const code of Object.keys(DSH_ERROR_CODES)) {
      const page = readFileSync(
        new URL(`../../../docs/errors/${code}.md`, import.meta.url),
        'utf8',
      );
      expect(page).toContain(`# ${code}`);
      expect(page).toContain('## Mitigation');
    }
  });
});
