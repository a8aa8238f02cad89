// The plugin's configuration: a valibot schema (DSH accepts any Standard Schema as `Config`), so
// a patch row's `config:` is validated with every issue named and defaults filled in.
import * as v from 'valibot';

const toolName = (fallback: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z][a-z0-9_]{0,63}$/, 'a tool name is lowercase letters, digits and _'),
    ),
    fallback,
  );

const positiveInt = (fallback: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), fallback);

const nonNegativeInt = (fallback: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), fallback);

const tier = v.strictObject({
  provider: v.optional(v.pipe(v.string(), v.minLength(1))),
  model: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Unset by default: children inherit the model's own ceiling. */
  maxTokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

const ConfigObject = v.strictObject({
  /** Project catalog, relative to the session's working directory. */
  projectDirectory: v.optional(v.string(), '.dsh/workflows'),
  /**
   * Personal catalog; empty means `personalCatalogRoot` from @wf/catalog-fs (`$DSH_HOME/workflows`,
   * else `$HOME/.dsh/workflows`), the rule the CLI uses too.
   */
  personalDirectory: v.optional(v.string(), ''),
  /** Run store, relative to the session's working directory. */
  runDirectory: v.optional(v.string(), '.dsh/workflow-runs'),
  listToolName: toolName('workflow_list'),
  runToolName: toolName('run_workflow'),
  manageToolName: toolName('workflow_manage'),
  /** `/workflow` by default. */
  commandName: v.optional(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,31}$/)), 'workflow'),
  /** DSH subagent transport for children (`spawn`, `fork`...). */
  provider: v.optional(v.pipe(v.string(), v.minLength(1)), 'spawn'),
  approvalMode: v.optional(
    v.picklist(['never', 'generated-and-local', 'always']),
    'generated-and-local',
  ),
  maxAgents: positiveInt(64),
  maxConcurrency: positiveInt(8),
  /** Concurrent children across all runs of one project. */
  deploymentConcurrency: positiveInt(8),
  /**
   * Cost guards, on by default: a child stuck in a structured-output retry loop would otherwise
   * make model calls until someone noticed. 0 turns one off.
   * Per-run wall limit (paused time excluded): 30 minutes.
   */
  wallMs: nonNegativeInt(1_800_000),
  /** Token budget of a run whose manifest sets none (the tighter of both applies): 1,000,000. */
  tokenBudget: nonNegativeInt(1_000_000),
  /** Wall limit of one child: 10 minutes; a child still running is stopped and fails. */
  childWallMs: nonNegativeInt(600_000),
  /** Model calls one child may make before it is stopped (WF_DSH_CHILD_LIMIT): 200. */
  maxChildModelCalls: nonNegativeInt(200),
  maxResultChars: positiveInt(50_000),
  /** Trusted read-only tools a read-only child may use (intersected with what the parent sees). */
  readOnlyTools: v.optional(v.array(v.string()), ['read', 'read_image', 'glob', 'grep', 'lsp']),
  tiers: v.optional(
    v.strictObject({ fast: v.optional(tier), balanced: v.optional(tier), deep: v.optional(tier) }),
    {},
  ),
  /**
   * Tell the model, in our prompt section, to prefer our run tool over DSH's native `workflow`
   * tool, which runs its script with node:vm and the host's full authority.
   */
  preferOverNativeWorkflow: v.optional(v.boolean(), true),
  /** Deny the native `workflow` tool to every agent, where the host supports it. */
  hideNativeWorkflow: v.optional(v.boolean(), false),
});

/**
 * DSH passes `undefined` for a patch row without `config:` (host quirk met at boot), so the
 * whole object is optional and defaults to the fully defaulted config.
 */
export const ConfigSchema = v.optional(ConfigObject, () => v.parse(ConfigObject, {}));

export type PluginConfig = v.InferOutput<typeof ConfigObject>;
export type PluginConfigInput = v.InferInput<typeof ConfigObject>;

/** Parses a config row; issues come back with their dotted path. */
export function parseConfig(
  input: unknown,
): { ok: true; config: PluginConfig } | { ok: false; issues: { path: string; message: string }[] } {
  const out = v.safeParse(ConfigSchema, input);
  if (out.success) return { ok: true, config: out.output };
  return {
    ok: false,
    issues: out.issues.map((i) => ({ path: v.getDotPath(i) ?? '', message: i.message })),
  };
}
