// The built-in workflows and patterns (@wf/patterns) and the shared resolver over them and the
// project's catalog. Its own module so that only the verbs that resolve names (run, list, save)
// load the patterns, the bridge and its schemas; `wf runs` and `wf show` never do.
import {
  type Catalog,
  createWorkflowResolver,
  type SourceWorkflowEntry,
  type WorkflowResolver,
} from '@wf/catalog-fs';
import { BUILT_INS, PATTERNS } from '@wf/patterns';

const SHIPPED = { builtIns: BUILT_INS, patterns: PATTERNS };

/** The shared resolver (@wf/catalog-fs) over the shipped workflows and this project's catalog. */
export function workflowResolver(catalog: Catalog | undefined): WorkflowResolver {
  return createWorkflowResolver({ shipped: SHIPPED, catalog: async () => catalog });
}

let shipped: readonly SourceWorkflowEntry[] | undefined;

/** Built-ins first, then patterns: the precedence `wf run <name>` resolves with. */
export function shippedWorkflows(): readonly SourceWorkflowEntry[] {
  shipped ??= workflowResolver(undefined).shipped();
  return shipped;
}
