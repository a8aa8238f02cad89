// For DSH 0.1.0-rc.8's headless profile only: the launcher calls ctx.hmr.registerConfig() after
// boot, the headless bundle mounts no hmr service and the published one lacks that method, so
// headless exits before the model is called. A no-op `hmr` service lets the launcher skip it.
// Never mount it in a profile that has a real hmr row (web): the two would collide.
export const name = 'wf-headless-hmr-shim';
export function apply(ctx) {
  ctx.provide('hmr', { registerConfig: async () => async () => {} });
}
