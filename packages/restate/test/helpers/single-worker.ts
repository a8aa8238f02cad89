// A fresh Restate server with one in-process worker registered directly (no balancer), plus the
// real sandbox it runs on: the setup the parity and large-answer tests share. Registers the file's
// beforeAll/afterAll; the fields are set once beforeAll has run.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll } from 'vitest';
import {
  type RestateWorker,
  type RestateWorkerOptions,
  startRestateWorker,
} from '../../src/index.js';
import { type RestateServer, startRestateServer } from './server.js';

export interface SingleWorker {
  server: RestateServer;
  sandbox: Sandbox;
  worker: RestateWorker;
}

/** `options`: the worker's options besides its server addresses and sandbox. */
export function useSingleWorker(
  options: Omit<RestateWorkerOptions, 'ingress' | 'admin' | 'sandbox'>,
): SingleWorker {
  const s = {} as SingleWorker;
  beforeAll(async () => {
    process.env.RESTATE_LOGGING = 'WARN';
    s.server = await startRestateServer();
    s.sandbox = await createSandbox({ poolSize: 1 });
    s.worker = await startRestateWorker({
      ...options,
      ingress: s.server.ingress,
      admin: s.server.admin,
      sandbox: s.sandbox,
    });
  }, 90_000);

  afterAll(async () => {
    await s.worker?.close();
    await s.sandbox?.close();
    await s.server?.stop();
  });
  return s;
}
