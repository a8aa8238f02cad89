/** How to start the pnpm running this script: `[command, ...leading args]` (see pnpm-command.mjs). */
export function pnpmCommand(
  env?: Readonly<Record<string, string | undefined>>,
  nodePath?: string,
): [string, ...string[]];
