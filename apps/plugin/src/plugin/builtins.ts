// The trusted-package workflows shipped by @wf/patterns.
import type { WorkflowCapsule } from '@wf/bridge';

const BUILTINS: readonly WorkflowCapsule[] = [];

export function builtinCapsules(): readonly WorkflowCapsule[] {
  return BUILTINS;
}
