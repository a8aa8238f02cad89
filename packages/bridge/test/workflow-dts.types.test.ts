/// <reference path="../workflow.d.ts" />
// Compile-time proof that workflow.d.ts (global, for editors) and src/api.ts (exported) declare
// the same types: `tsc -p tsconfig.test.json` fails if any pair drifts. The runtime test below
// keeps vitest aware of the file.
import { expect, it } from 'vitest';
import type * as Api from '../src/index.js';

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

type Probe = { readonly finding: string };

export type Checks = [
  Assert<Equal<WorkflowJsonValue, Api.JsonValue>>,
  Assert<Equal<WorkflowModelHint, Api.ModelHint>>,
  Assert<Equal<WorkflowIsolationMode, Api.IsolationMode>>,
  Assert<Equal<EvidenceRef, Api.EvidenceRef>>,
  Assert<Equal<TaskVerification, Api.TaskVerification>>,
  Assert<Equal<JsonSchemaObject, Api.JsonSchemaObject>>,
  Assert<Equal<TaskInput, Api.TaskInput>>,
  Assert<Equal<TaskHandle, Api.TaskHandle>>,
  Assert<Equal<TaskStatus, Api.TaskStatus>>,
  Assert<Equal<TaskUsage, Api.TaskUsage>>,
  Assert<Equal<WorkflowErrorInfo, Api.WorkflowErrorInfo>>,
  Assert<Equal<TaskResult, Api.TaskResult>>,
  Assert<Equal<TaskResult<Probe>, Api.TaskResult<Probe>>>,
  Assert<Equal<TaskVerificationOutcome, Api.TaskVerificationOutcome>>,
  Assert<Equal<TaskSnapshot, Api.TaskSnapshot>>,
  Assert<Equal<TaskSnapshot<Probe>, Api.TaskSnapshot<Probe>>>,
  Assert<Equal<TaskFailure, Api.TaskFailure>>,
  Assert<Equal<WorkflowBudget, Api.WorkflowBudget>>,
  Assert<Equal<WaitOptions, Api.WaitOptions>>,
  Assert<Equal<ParallelOptions, Api.ParallelOptions>>,
  Assert<Equal<PipelineStage<Probe>, Api.PipelineStage<Probe>>>,
  Assert<Equal<SynthesizeInput, Api.SynthesizeInput>>,
  Assert<Equal<ArtifactRef, Api.ArtifactRef>>,
  Assert<Equal<LogEvent, Api.LogEvent>>,
  Assert<Equal<WorkflowApi, Api.WorkflowApi>>,
  Assert<Equal<WorkflowApi<Probe>, Api.WorkflowApi<Probe>>>,
  Assert<Equal<WorkflowRun, Api.WorkflowRun>>,
  Assert<Equal<WorkflowRun<Probe, number>, Api.WorkflowRun<Probe, number>>>,
];

it('workflow.d.ts and src/api.ts are checked for equality at compile time', () => {
  const remaining: WorkflowBudget['remaining'] = () => null;
  expect(remaining()).toBeNull();
});
