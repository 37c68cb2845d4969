// Sample inputs for the data API's tests: capture time pairs, sensor readings and the component types
// they use, and the status code a refused call ends with. The tabular and binary suites share them.
import { codeOf } from './tenancy-fixture.js';

export const SENSOR = 'rdk:component:sensor';
export const CAMERA = 'rdk:component:camera';

/** n (requested, received) pairs a second apart, the received time 5 ms after the requested one. */
export const timePairs = (n: number, base = Date.now() - n * 1000) =>
  Array.from({ length: n }, (_, i) => [new Date(base + i * 1000), new Date(base + i * 1000 + 5)] as [Date, Date]);

/** n sensor readings {readings: {key: i}}. */
export const sensorReadings = (n: number, key = 'temperature') => Array.from({ length: n }, (_, i) => ({ readings: { [key]: i } }));

/** The gRPC status code of a call that must fail (the test fails if it does not). */
export async function grpcCode(t: { throwsAsync: (p: Promise<unknown>) => Promise<unknown> }, promise: Promise<unknown>): Promise<number | undefined> {
  return codeOf(await t.throwsAsync(promise));
}
