// The inline workflow the scripted model sends in the real-host suites: one read-only child per
// angle (its prompt carries the CHILD-TASK marker the model server answers), then the findings.
export const FAN_SOURCE = `async function run(wf, args) {
  const results = await wf.parallel(
    args.angles.map((a) => () =>
      wf.runAgent({ name: a, phase: 'fan', prompt: 'CHILD-TASK investigate ' + a, readOnly: true }),
    ),
  );
  return { findings: results.map((r) => (r ? r.finalText : null)) };
}`;
