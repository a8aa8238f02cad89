// Assembles a shipped capsule from its parts and the embedded source of the same name.
import {
  CAPSULE_FORMAT,
  CAPSULE_VERSION,
  type CapsuleInputs,
  type CapsuleIntent,
  type CapsuleRequires,
  WORKFLOW_API_VERSION,
  type WorkflowCapsule,
  type WorkflowManifest,
} from '@wf/bridge';
import { MIN_DSH_VERSION } from '../dsh-version.js';
import { WORKFLOW_SOURCES } from './workflow-sources.generated.js';

export interface CapsuleParts {
  readonly manifest: WorkflowManifest;
  readonly intent: CapsuleIntent;
  readonly inputs: CapsuleInputs;
  readonly requires?: CapsuleRequires;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function defineCapsule(parts: CapsuleParts): WorkflowCapsule {
  const source = WORKFLOW_SOURCES[parts.manifest.name];
  // A build-time mistake (a capsule without its .workflow.js), caught by every test run.
  if (source === undefined) throw new Error(`no source for workflow ${parts.manifest.name}`);
  return deepFreeze({
    format: CAPSULE_FORMAT,
    version: CAPSULE_VERSION,
    workflowApiVersion: WORKFLOW_API_VERSION,
    minDshVersion: MIN_DSH_VERSION,
    manifest: parts.manifest,
    source,
    intent: parts.intent,
    inputs: parts.inputs,
    ...(parts.requires ? { requires: parts.requires } : {}),
  });
}
