// What the online end-to-end tests share: a sensor entry, a polling wait, and the runtime's readings and
// machine status over gRPC.
import { SensorServiceClient } from '../../../gen/platform/component/sensor/v1/sensor.js';
import { RobotServiceClient, type ResourceState } from '../../../gen/platform/robot/v1/robot.js';
import { call, insecure } from '../../../core/server/testing/grpc.js';
import type { SpawnedRuntime } from '../../../core/server/testing/spawn-runtime.js';

export type Machine = { machine_id: string; part_id: string; part_secret: string };

export const sensor = (name: string, readings: Record<string, unknown>) => ({ name, api: 'core:component:sensor', model: 'fake', attributes: { readings } });

export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}: ${String(last)}`);
}

export async function readings(runtime: SpawnedRuntime, name: string): Promise<Record<string, unknown>> {
  const client = new SensorServiceClient(runtime.address, insecure());
  try {
    return ((await call(client, 'getReadings', { name })) as { readings: Record<string, unknown> }).readings;
  } finally {
    client.close();
  }
}

export async function machineStatus(
  runtime: SpawnedRuntime,
): Promise<{ configError: string; resources: { name?: { name: string }; state: ResourceState; error: string }[] }> {
  const client = new RobotServiceClient(runtime.address, insecure());
  try {
    return await call(client, 'getMachineStatus', {});
  } finally {
    client.close();
  }
}

/** The credentials file of a machine part. */
export const credentialsOf = (m: Machine, address: string) => ({ cloud: { id: m.part_id, secret: m.part_secret, app_address: address } });
