// Compiles source in real QuickJS (quickjs-emscripten 0.32, bellard 2025-09, release-sync
// variant) without running it. Every handle is disposed; a leak would abort the dispose.
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';

// The variant ships CJS types; under ESM the default import is the variant itself.
const variant: QuickJSSyncVariant =
  (releaseSync as unknown as { default?: QuickJSSyncVariant }).default ??
  (releaseSync as unknown as QuickJSSyncVariant);

export interface QuickJSCompiler {
  /** null when QuickJS compiles the script, else its error message. */
  compile(source: string): string | null;
  /** The own property names of a fresh context's global object. */
  globalNames(): string[];
  dispose(): void;
}

let modulePromise: Promise<QuickJSWASMModule> | undefined;

export async function createCompiler(): Promise<QuickJSCompiler> {
  modulePromise ??= newQuickJSWASMModuleFromVariant(variant);
  const mod = await modulePromise;
  const runtime = mod.newRuntime();
  runtime.setMaxStackSize(1024 * 1024);
  const ctx: QuickJSContext = runtime.newContext();
  return {
    compile(source) {
      const result = ctx.evalCode(source, 'workflow.js', { strict: true, compileOnly: true });
      if (result.error) {
        const dumped = ctx.dump(result.error) as { message?: string } | string;
        result.error.dispose();
        return typeof dumped === 'string'
          ? dumped
          : String(dumped?.message ?? JSON.stringify(dumped));
      }
      result.value.dispose();
      return null;
    },
    globalNames() {
      const result = ctx.evalCode('JSON.stringify(Object.getOwnPropertyNames(globalThis))');
      if (result.error) {
        result.error.dispose();
        throw new Error('could not list QuickJS globals');
      }
      const text = ctx.getString(result.value);
      result.value.dispose();
      return JSON.parse(text) as string[];
    },
    dispose() {
      ctx.dispose();
      runtime.dispose();
    },
  };
}

/** The source as the sandbox will see it: the script, then a read of `run`. */
export function wrapForSandbox(source: string): string {
  return `${source}\n;typeof run;\n`;
}
