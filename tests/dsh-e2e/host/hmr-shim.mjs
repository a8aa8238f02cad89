// rc.8's launcher calls ctx.hmr.registerConfig() after boot (user patch-layer watching) and the
// published hmr plugin has no such method: headless would crash before the model is ever called.
// Providing a no-op `hmr` service makes the launcher skip creating the real one.
export const name = 'wf-e2e-hmr-shim';
export function apply(ctx) {
  ctx.provide('hmr', { registerConfig: async () => async () => {} });
}
