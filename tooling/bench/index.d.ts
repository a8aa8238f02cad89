// Types for index.js (plain ESM so benches load it without a build step).
export declare function median(samples: number[]): number;
export declare function ratio(value: number, floor: number): string;
export declare function nodeStartMs(samples?: number): number;
export declare const TRIVIAL_PROGRAM: string;
export declare function bareQuickJs(): Promise<{
  runOnce(): number;
  timeOnce(): number;
  callUs(n?: number): number;
  evaluateAsync(program: string, answer: (v: number) => Promise<number>): Promise<number>;
}>;
export declare function workerQuickJs(): Promise<{
  runOnce(): Promise<number>;
  callUs(n?: number): Promise<number>;
  close(): Promise<number>;
}>;
export declare function workerPingPong(): Promise<{
  roundTripUs(n?: number): Promise<number>;
  close(): Promise<number>;
}>;
export interface Calibration {
  date: string;
  nodeStartMs: number;
  quickjsEvalMs: number;
  pingPongUs: number;
  load: number;
  cores: number;
}
export declare function calibrate(): Promise<Calibration>;
export declare function formatCalibration(c: Calibration): string;
export declare function calibration(): Promise<Calibration>;
