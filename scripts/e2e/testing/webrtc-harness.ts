// What the WebRTC end-to-end tests share: the machine they dial (a sensor, a fake board and a motor on
// it), the dial itself (on the LAN through the machine's own signaling, or through the cloud's), the
// cloud with an organization, its machines online as their parts and keys of it and of another
// organization, and the checks every transport must pass (a motor driven and stopped, a server stream,
// a machine that does not answer WebRTC).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { ServiceError } from '@grpc/grpc-js';
import { RobotClient } from '../../../cloud/client/robot-client.js';
import type { ApiKeyCredentials } from '../../../cloud/client/connection.js';
import type { SignalingDialOptions } from '../../../cloud/client/webrtc-dial.js';
import { MotorServiceClient } from '../../../gen/platform/component/motor/v1/motor.js';
import type { StreamLogsResponse } from '../../../gen/platform/robot/v1/robot.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../../cloud/testing/spawn-cloud.js';
import { call as cloudCall, partClients, type PartClients } from '../../../cloud/parts/testing/part-clients.js';
import { call } from '../../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime, type SpawnOptions } from '../../../core/server/testing/spawn-runtime.js';
import { credentialsOf, sensor, type Machine } from './online-helpers.js';

/** The sensor `thermo` (reading `celsius`), the fake board `b` and the gpio motor `m` on it. */
export const webrtcComponents = (celsius: number) => [
  sensor('thermo', { celsius }),
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '36', dir: '37' }, max_rpm: 100 } },
];

/** Dials a machine on the LAN: signaling through its own gRPC port, then gRPC over the data channel. */
export const dialLan = (address: string, options: Partial<SignalingDialOptions> = {}) =>
  RobotClient.connect({ webrtc: { signalingAddress: address, host: 'this-machine', ...options } });

/** Drives motor `m` at `powerPct` over the client's transport, checks it moves, stops it and checks it stopped. */
export async function driveAndStopMotor(t: ExecutionContext, client: RobotClient, powerPct: number): Promise<void> {
  const motors = client.service(MotorServiceClient);
  await call(motors, 'setPower', { name: 'm', powerPct });
  t.true((await call(motors, 'isMoving', { name: 'm' })).isMoving);
  await call(motors, 'stop', { name: 'm' });
  t.false((await call(motors, 'isMoving', { name: 'm' })).isMoving);
}

/** The first message of StreamLogs (the backlog), then the stream is cancelled: a server stream over the transport. */
export function firstLogs(client: RobotClient): Promise<StreamLogsResponse> {
  return new Promise<StreamLogsResponse>((resolve, reject) => {
    const stream = client.robot.streamLogs({ minLevel: 'info', backlog: 10 });
    stream.once('data', (r: StreamLogsResponse) => {
      resolve(r);
      stream.cancel();
    });
    stream.on('error', (err: ServiceError) => (err.code === 1 ? undefined : reject(err)));
  });
}

/** A machine with -webrtc=false serves no SignalingService on its port: the LAN dial is UNIMPLEMENTED. */
export async function assertNoLanSignaling(t: ExecutionContext, address: string): Promise<void> {
  const err = await t.throwsAsync<ServiceError>(dialLan(address));
  t.is(err.code, 12, 'SignalingService is not served (UNIMPLEMENTED)');
}

export interface CloudMachineSpec {
  name: string;
  /** platform-server's flags, e.g. ['-webrtc=false']. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
}

export interface WebRtcCloud {
  cloud: SpawnedCloud;
  dataDir: string;
  /** Clients of the cloud's APIs with the organization's owner key. */
  owner: PartClients;
  /** An operator key of the machines' organization. */
  key: ApiKeyCredentials;
  /** An owner key of another organization. */
  strangerKey: ApiKeyCredentials;
  /** The machines by name, each with its platform-server online as its part. */
  machines: Record<string, Machine & { runtime: SpawnedRuntime }>;
  /** Dials a part through the cloud's signaling. */
  dial(partId: string, credentials: ApiKeyCredentials, options?: Partial<SignalingDialOptions>): Promise<RobotClient>;
  stop(): Promise<void>;
}

/**
 * platform-cloud (with `cloudEnv` added to its environment), the organization "acme" with `machines`
 * configured with `components` and their platform-servers online, and "elsewhere", another organization.
 * On failure part-way, what was started is stopped before the error is thrown.
 */
export async function startWebRtcCloud(options: { machines: CloudMachineSpec[]; components: unknown[]; cloudEnv?: NodeJS.ProcessEnv }): Promise<WebRtcCloud> {
  const dataDir = tempDataDir();
  const started: { cloud?: SpawnedCloud; owner?: PartClients; runtimes: SpawnedRuntime[] } = { runtimes: [] };
  const stop = async () => {
    await Promise.all(started.runtimes.map((r) => r.stop()));
    started.owner?.close();
    await started.cloud?.stop();
    removeDataDir(dataDir);
  };
  try {
    const cloud = (started.cloud = await spawnCloud(dataDir, [], options.cloudEnv ?? {}));
    const org = await adminJson(dataDir, ['org', 'create', 'acme']);
    const other = await adminJson(dataDir, ['org', 'create', 'elsewhere']);
    const ownerKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
    const operatorKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'operator']);
    const stranger = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', other.id, '--role', 'owner']);
    const owner = (started.owner = await partClients(cloud.address, ownerKey));
    const machines: WebRtcCloud['machines'] = {};
    for (const spec of options.machines) {
      const m = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', spec.name]);
      await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: m.part_id, robotConfig: { components: options.components } }, owner.md);
      const spawnOptions: SpawnOptions = {
        args: spec.args,
        env: { PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-webrtc-')), PLATFORM_ONLINE_RETRY_MAX_MS: '1000', ...spec.env },
      };
      const runtime = await spawnRuntime(credentialsOf(m, cloud.address), spawnOptions);
      started.runtimes.push(runtime);
      machines[spec.name] = { ...m, runtime };
    }
    return {
      cloud,
      dataDir,
      owner,
      key: { type: 'api-key', authEntity: operatorKey.id, payload: operatorKey.key },
      strangerKey: { type: 'api-key', authEntity: stranger.id, payload: stranger.key },
      machines,
      dial: (host, credentials, extra = {}) => RobotClient.connect({ webrtc: { signalingAddress: cloud.address, host, credentials, ...extra } }),
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
