// The trusted-package workflows shipped by @wf/patterns: built-ins first, then the six patterns
// (DESIGN.md section 4 precedence: nothing in a catalog shadows them).
import type { WorkflowCapsule } from '@wf/bridge';
import { BUILT_INS, SHIPPED_WORKFLOWS } from '@wf/patterns';

export function builtinCapsules(): readonly WorkflowCapsule[] {
  return SHIPPED_WORKFLOWS;
}

/** `built-in` for the built-ins, `pattern` for the six patterns. */
export function shippedSource(capsule: WorkflowCapsule): 'built-in' | 'pattern' {
  return BUILT_INS.some((b) => b.manifest.name === capsule.manifest.name) ? 'built-in' : 'pattern';
}
