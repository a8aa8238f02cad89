// Where a changed file belongs: its area (workspace or top-level directory), its category
// (source/tests/docs/config/other) and whether it matches a high-risk path pattern.

export type PathCategory = 'source' | 'tests' | 'docs' | 'config' | 'other';

const TEST_PATH =
  /(^|\/)(test|tests|__tests__|spec|specs|e2e)\/|\.(test|spec|bench)\.[a-z0-9]+$|_test\.(go|py|rs)$|(^|\/)test_[^/]*\.py$/i;
const DOC_PATH =
  /(^|\/)(docs?|documentation)\/|\.(md|mdx|markdown|rst|adoc|txt)$|(^|\/)(readme|changelog|license|licence|notice|contributing|authors)(\.[^/]*)?$/i;
const CONFIG_PATH =
  /(^|\/)(package\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml|package-lock\.json|yarn\.lock|bun\.lockb|cargo\.lock|go\.sum|go\.mod|poetry\.lock|gemfile\.lock|dockerfile|makefile|tsconfig[^/]*\.json|biome\.json|turbo\.json|\.gitignore|\.gitattributes|\.editorconfig|\.npmrc|\.nvmrc)$|\.(json|jsonc|ya?ml|toml|ini|cfg|conf|properties|lock|env)$|(^|\/)\.(github|gitlab|circleci|changeset|ci|vscode|husky)\//i;
const SOURCE_PATH =
  /\.(c|cc|cpp|cxx|h|hh|hpp|cs|go|rs|java|kt|kts|scala|swift|m|mm|py|pyi|rb|php|pl|lua|r|jl|ex|exs|erl|hs|ml|mli|clj|cljs|dart|zig|nim|v|sv|vhd|js|mjs|cjs|jsx|ts|mts|cts|tsx|vue|svelte|css|scss|sass|less|html|sql|sh|bash|zsh|fish|ps1|psm1|bat|cmd|wasm|wat|proto|graphql|gql|tf|hcl|nix)$/i;

export function categoryOf(path: string): PathCategory {
  if (TEST_PATH.test(path)) return 'tests';
  if (DOC_PATH.test(path)) return 'docs';
  if (CONFIG_PATH.test(path)) return 'config';
  if (SOURCE_PATH.test(path)) return 'source';
  return 'other';
}

/** `packages/engine`, `apps/plugin`, the top-level directory, or `root` for top-level files. */
export function areaOf(path: string, workspaceGroups: readonly string[]): string {
  const parts = path.split('/');
  if (parts.length === 1) return 'root';
  const top = parts[0] as string;
  if (parts.length > 2 && workspaceGroups.includes(top)) return `${top}/${parts[1]}`;
  return top;
}

/** Compiles a path glob: `**` any run of segments, `*` within one segment, `?` one character. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const ch = glob[i] as string;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        out += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else {
        out += '[^/]*';
      }
    } else if (ch === '?') {
      out += '[^/]';
    } else {
      out += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${out}$`, 'i');
}
