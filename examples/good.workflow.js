// A realistic workflow: fan out one read-only reviewer per angle, verify the findings each one
// reports, and synthesize a ranked report. Check it with: pnpm wf check examples/good.workflow.js
const DEFAULT_ANGLES = ['correctness', 'security', 'performance', 'readability'];
const FINDING = /^(high|medium|low):\s*(.+)$/i;

function parseFindings(angle, text) {
  const findings = [];
  for (const line of (text ?? '').split('\n')) {
    const match = FINDING.exec(line.trim());
    if (match) findings.push({ angle, severity: match[1].toLowerCase(), summary: match[2] });
  }
  return findings;
}

// biome-ignore lint/correctness/noUnusedVariables: the workflow runtime calls run(wf, args)
async function run(wf, args) {
  const { target, angles = DEFAULT_ANGLES, concurrency = 3 } = args;
  const reviews = await wf.phase('review', () =>
    wf.parallel(
      angles.map(
        (angle) => () =>
          wf.runAgent({
            name: `review-${angle}`,
            prompt: `Review ${target} for ${angle} problems. One finding per line: "<high|medium|low>: <summary>".`,
            readOnly: true,
          }),
      ),
      { concurrency },
    ),
  );
  const findings = reviews.flatMap((review, i) => parseFindings(angles[i], review?.text));
  wf.log({ message: 'review finished', data: { findings: findings.length } });

  const verified = await wf.phase('verify', () =>
    wf.parallel(
      findings.map((finding, i) => async () => {
        const verdict = await wf.runAgent({
          name: `verify-${i + 1}`,
          prompt: `Is this a real problem in ${target}? Answer CONFIRMED or REJECTED, then why.\n${finding.summary}`,
          readOnly: true,
        });
        return /^confirmed/i.test(verdict?.text ?? '') ? finding : null;
      }),
      { concurrency },
    ),
  );
  const confirmed = verified.filter(Boolean);

  return wf.phase('synthesize', () =>
    wf.synthesize({
      inputs: confirmed,
      rubric: 'merge duplicates, rank by severity (high first), one line of advice per finding',
    }),
  );
}
