// For DSH 0.1.0-rc.8, both profiles: after boot the launcher calls ctx.hmr.registerConfig() (to
// watch the user patch layers), the headless and web bundles both disable their `hmr` row and the
// published hmr plugin lacks that method, so DSH exits right after boot. A no-op `hmr` service
// lets the launcher skip it; the cost is that edits to cordis.patch.yml apply at the next start.
export const name = 'wf-hmr-shim';
export function apply(ctx) {
  ctx.provide('hmr', { registerConfig: async () => async () => {} });
}
