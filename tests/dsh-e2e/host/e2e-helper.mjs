// Test-only DSH plugin for the e2e suite (never shipped). Headless DSH has no approval answerer,
// no question provider and no slash-command entry; this plugin supplies them on request and
// exposes two probe tools the scripted model calls:
//   e2e_command {line}  -> ctx.commands.execute(agent, line, [], signal)
//   e2e_sessions {}     -> every stored session re-loaded through the host's own persistence
//                          (the resume path: it refuses unknown event types), with its
//                          tool-workflow/* events.
// WF_E2E_NOFILTER=1 registers a subagent provider `nofilter` without the toolFilter capability.
// Env: WF_E2E_APPROVAL=allowed-once|rejected|... answers approvals; WF_E2E_ANSWER=<label>
// answers every question with that option; WF_E2E_LOG=<file> gets one JSON line per ask.
import { appendFileSync } from 'node:fs';

export const name = 'wf-e2e-helper';
export const inject = ['tools', 'commands', 'subagents'];

const log = (entry) => {
  if (process.env.WF_E2E_LOG) appendFileSync(process.env.WF_E2E_LOG, `${JSON.stringify(entry)}\n`);
};
const json = (value) => [{ type: 'text', text: JSON.stringify(value) }];

export function apply(ctx) {
  const approval = process.env.WF_E2E_APPROVAL;
  if (approval) {
    ctx.on('approval/request', async (req) => {
      log({ kind: 'approval', toolName: req.toolName, reason: req.reason });
      return approval;
    });
  }
  const answer = process.env.WF_E2E_ANSWER;
  if (answer) {
    const questions = ctx.get('userQuestions');
    questions?.registerProvider({
      async ask(req) {
        log({ kind: 'question', questions: req.questions.map((q) => q.question) });
        return { answers: req.questions.map((q) => ({ id: q.id, selected: [answer] })) };
      },
    });
  }
  if (process.env.WF_E2E_NOFILTER) {
    // A transport that cannot restrict tools: a read-only task must be refused before launch.
    ctx.subagents.registerProvider({
      name: 'nofilter',
      capabilities: { outputSchema: false, depthLimit: false, toolFilter: false, persona: false },
      inheritsParentContext: false,
      async start() {
        log({ kind: 'nofilter-start' });
        throw new Error('the nofilter provider never launches children');
      },
    });
  }
  ctx.tools.register({
    name: 'e2e_command',
    description: 'Run a slash command line in this session.',
    parameters: { type: 'object', properties: { line: { type: 'string' } }, required: ['line'] },
    output: { schema: { description: 'any' }, render: (_a, v) => json(v) },
    async execute(args, exec) {
      const out = await ctx.commands.execute(exec.agent, args.line, [], exec.signal);
      return out ? { result: out.result } : { result: null };
    },
  });
  ctx.tools.register({
    name: 'e2e_sessions',
    description: 'Reload every stored session through the host persistence.',
    parameters: { type: 'object', properties: {} },
    output: { schema: { description: 'any' }, render: (_a, v) => json(v) },
    async execute(_args, exec) {
      const persistence = ctx.get('sessionPersistence');
      const headers = await persistence.list();
      const out = [];
      for (const h of headers) {
        if (h.id === exec.agent?.session.id) continue; // the live probe session itself
        try {
          const prep = await persistence.prepare(h.id);
          const events = prep.session.events;
          out.push({
            id: h.id,
            parentSession: h.parentSession ?? null,
            origin: h.origin ?? null,
            ok: true,
            eventCount: events.length,
            workflow: events
              .filter((e) => e.type.startsWith('tool-workflow/'))
              .map((e) => ({ type: e.type, data: e.data })),
          });
          prep[Symbol.dispose]?.();
        } catch (error) {
          out.push({ id: h.id, ok: false, error: String(error?.message ?? error) });
        }
      }
      return { sessions: out };
    },
  });
}
