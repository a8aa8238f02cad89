// Coexistence with DSH's native `workflow` tool: the prompt guidance (default on) and the opt-in
// per-agent hiding, against host-shaped agents. The real host is exercised by tests/dsh-e2e.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/index.js';
import { hideNativeWorkflowTool, NATIVE_WORKFLOW_TOOL } from '../src/plugin/native-workflow.js';
import { promptSection } from '../src/plugin/prompt.js';

const config = (input: Record<string, unknown> = {}) => {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
};

describe('prompt guidance about the native workflow tool', () => {
  it('is on by default: prefer our run tool, and says why', () => {
    const text = promptSection(config());
    expect(text).toContain(
      "If DSH's own `workflow` tool is also offered, use `run_workflow` instead",
    );
    expect(text).toMatch(/node:vm .* full authority/);
    expect(text).toMatch(/QuickJS sandbox/);
  });

  it('follows a renamed run tool, and can be turned off', () => {
    expect(promptSection(config({ runToolName: 'wf_run' }))).toContain('use `wf_run` instead');
    expect(promptSection(config({ preferOverNativeWorkflow: false }))).not.toContain('node:vm');
  });

  it('is left out when the native tool is hidden (no choice left to steer)', () => {
    expect(promptSection(config({ hideNativeWorkflow: true }), true)).not.toContain('node:vm');
  });

  it('config: both options are booleans, named by path when wrong', () => {
    expect(config()).toMatchObject({ preferOverNativeWorkflow: true, hideNativeWorkflow: false });
    const bad = parseConfig({ hideNativeWorkflow: 'yes' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.issues[0]?.path).toBe('hideNativeWorkflow');
  });
});

describe('hiding the native workflow tool', () => {
  function host() {
    const listeners: ((p: { agent?: unknown }) => void)[] = [];
    return {
      listeners,
      on(event: string, listener: (p: { agent?: unknown }) => void) {
        expect(event).toBe('agent/created');
        listeners.push(listener);
        return () => {};
      },
    };
  }
  const agent = (restrict?: (f: { deny: readonly string[] }) => () => void) => ({
    id: 'a',
    ctx: { tools: restrict ? { restrict } : {} },
  });

  it('denies the tool in each new agent scope', () => {
    const h = host();
    expect(hideNativeWorkflowTool(h)).toBe(true);
    const filters: unknown[] = [];
    for (const _ of [1, 2])
      for (const l of h.listeners)
        l({
          agent: agent((f) => {
            filters.push(f);
            return () => {};
          }),
        });
    expect(filters).toEqual([{ deny: [NATIVE_WORKFLOW_TOOL] }, { deny: [NATIVE_WORKFLOW_TOOL] }]);
  });

  it('tolerates agents without restriction and a host that refuses the name', () => {
    const h = host();
    hideNativeWorkflowTool(h);
    const listener = h.listeners[0];
    expect(() => listener?.({ agent: agent() })).not.toThrow();
    expect(() => listener?.({})).not.toThrow();
    expect(() =>
      listener?.({
        agent: agent(() => {
          throw new Error('tools.restrict() names unknown global tool "workflow"');
        }),
      }),
    ).not.toThrow();
  });

  it('reports false on a host without agent events (the prompt guidance stays)', () => {
    expect(hideNativeWorkflowTool({})).toBe(false);
  });
});
