// @wf/plugin: the DSH plugin (default export and named `name`, `inject`, `Config`, `apply`).
// Mount it with `dsh plugin --profile <p> add @wf/plugin` (its package.json declares the bundle
// patch) or a patch row `- insert: [{ id: wf-workflows, name: <path to dist/index.js> }]`.
import { apply as applyPlugin, Config, inject, name } from './plugin/plugin.js';
import type { PluginConfig } from './plugin/config.js';
import type { PluginHost } from './plugin/host-context.js';

export { Config, inject, name };
export {
  PLUGIN_ERROR_CODES,
  PluginError,
  type PluginErrorCode,
} from './plugin/errors.js';
export { parseConfig, type PluginConfig, type PluginConfigInput } from './plugin/config.js';
export type { PluginHost } from './plugin/host-context.js';
export type { AppliedPlugin } from './plugin/plugin.js';

/** Cordis calls `apply(ctx, config)` with the config already validated by `Config`. */
export function apply(ctx: PluginHost, config: PluginConfig): void {
  applyPlugin(ctx, config);
}

export default { name, inject, Config, apply };
