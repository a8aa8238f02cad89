// Shared test helpers: real temp directories and valid dsh.workflow v1 capsules.
import { accessSync, constants, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function makeCapsule(name: string, marker = 'v1'): Record<string, unknown> {
  return {
    format: 'dsh.workflow',
    version: 1,
    workflowApiVersion: 1,
    minDshVersion: '0.2.0',
    manifest: {
      name,
      description: `test workflow ${marker}`,
      phases: ['run'],
      readOnly: true,
      maxAgents: 2,
      maxConcurrency: 1,
      patterns: ['fan-out-and-synthesize'],
    },
    source: `// ${marker}\nasync function run(wf, args) { return '${marker}'; }\n`,
  };
}

/** A fresh real (canonical) temp directory (under `parent`, default the OS's), removed by cleanup. */
export function tempDir(
  prefix = 'wf-catalog-',
  parent: string = tmpdir(),
): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(join(parent, prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** /dev/shm when it is a writable directory (a tmpfs on Linux: fsync is free), else undefined. */
export function memoryTmp(): string | undefined {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return statSync('/dev/shm').isDirectory() ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}
