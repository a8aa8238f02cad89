// node:crypto, loaded on first use: loading it costs a short command a visible share of its run,
// and the read paths (`wf runs`, `wf show`) never need it.
type Crypto = typeof import('node:crypto');

let crypto: Crypto | undefined;
const load = (): Crypto => {
  crypto ??= process.getBuiltinModule('node:crypto');
  return crypto;
};

export function randomBytes(size: number): Buffer {
  return load().randomBytes(size);
}

export function createHash(algorithm: string): ReturnType<Crypto['createHash']> {
  return load().createHash(algorithm);
}
