// Turns capsule bytes into a validated capsule or one message that names the problem, using
// @wf/bridge's parser (the single definition of the format). The bridge (and its schema library)
// loads when a catalog opens, not with this package: the run store never needs it, and `wf runs`
// should not pay for it.
import type { ManifestLimits, parseCapsule, WorkflowCapsule } from '@wf/bridge';

type CapsuleFormat = Pick<typeof import('@wf/bridge'), 'parseCapsule' | 'WORKFLOW_NAME_PATTERN'>;
let format: CapsuleFormat | undefined;

/** Loads the capsule parser; openCatalog awaits it before any catalog method can run. */
export async function loadCapsuleFormat(): Promise<void> {
  format ??= await import('@wf/bridge');
}

function capsuleFormat(): CapsuleFormat {
  if (format === undefined)
    throw new Error('internal: the capsule format was used before openCatalog loaded it');
  return format;
}

export type CapsuleCheck =
  | { readonly ok: true; readonly capsule: WorkflowCapsule }
  | { readonly ok: false; readonly message: string };

const MAX_ISSUES_IN_MESSAGE = 5;

/** Validates a parsed capsule and that `manifest.name` is `expectedName`. */
export function checkCapsuleValue(
  value: unknown,
  expectedName: string,
  limits: ManifestLimits | undefined,
): CapsuleCheck {
  let parsed: ReturnType<typeof parseCapsule>;
  try {
    parsed = capsuleFormat().parseCapsule(value, limits === undefined ? {} : { limits });
  } catch (error) {
    // A hostile value (throwing getter, proxy trap) fails its own save, never the host.
    return {
      ok: false,
      message: `invalid capsule: it could not be read (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (!parsed.ok) {
    const shown = parsed.issues
      .slice(0, MAX_ISSUES_IN_MESSAGE)
      .map((issue) => `${issue.path || 'capsule'}: ${issue.message}`);
    const more = parsed.issues.length - shown.length;
    return {
      ok: false,
      message: `invalid capsule: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
    };
  }
  if (parsed.capsule.manifest.name !== expectedName) {
    return {
      ok: false,
      message: `manifest.name "${parsed.capsule.manifest.name}" does not match the file name "${expectedName}"`,
    };
  }
  return parsed;
}

/** Parses capsule file bytes (UTF-8 JSON) and validates them. */
export function checkCapsuleBytes(
  bytes: Buffer,
  expectedName: string,
  limits: ManifestLimits | undefined,
): CapsuleCheck {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      message:
        bytes.length === 0
          ? 'the file is empty'
          : `not valid JSON (${reason}); the file may be truncated or hand-edited`,
    };
  }
  return checkCapsuleValue(value, expectedName, limits);
}

export function isWorkflowName(name: unknown): name is string {
  return typeof name === 'string' && capsuleFormat().WORKFLOW_NAME_PATTERN.test(name);
}

export function serializeCapsule(capsule: WorkflowCapsule): string {
  return `${JSON.stringify(capsule, null, 2)}\n`;
}
