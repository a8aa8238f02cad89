import { describe, expect, it } from 'vitest';
import { redactHostMessage } from '../src/internal/redact.js';

describe('redactHostMessage', () => {
  it('removes absolute paths, file URLs, node internals, stack lines and versions', () => {
    const m = redactHostMessage(
      `ENOENT: no such file, open '/home/alice/project/.env' via file:///srv/app/index.js on Node.js v20.20.2 (${process.version})\n    at Object.openSync (node:fs:573:18)\n    at C:\\Users\\bob\\x.js:1:1`,
    );
    expect(m).toBe("ENOENT: no such file, open '<path>' via <path> on <runtime> (<version>)");
    expect(m).not.toMatch(/alice|srv|node:|v20|bob/);
  });
  it('keeps ordinary text, relative paths and fractions', () => {
    expect(redactHostMessage('budget 3/4 used for src/a.ts and/or b')).toBe(
      'budget 3/4 used for src/a.ts and/or b',
    );
  });
  it('caps the length', () => {
    const m = redactHostMessage('x'.repeat(5000), 100);
    expect(m.length).toBe(100);
    expect(m.endsWith('…')).toBe(true);
  });
  it('redacts node internals and windows paths on their own', () => {
    expect(redactHostMessage('failed in node:internal/modules/cjs/loader')).toBe(
      'failed in <internal>',
    );
    expect(redactHostMessage('cannot read D:\\secrets\\k.pem')).toBe('cannot read <path>');
  });
});
