// platform.robot.v1.RobotService: the machine as a whole.
import { status } from '@grpc/grpc-js';
import * as pb from '../../../gen/platform/robot/v1/robot.js';
import type { ResourceState as KernelState } from '../../kernel/resource-node.js';
import { actuationOf } from '../../session/actuators.js';
import type { Sessions } from '../../session/sessions.js';
import { StatusError } from '../../shared/status-error.js';
import type { ResourceAccess } from '../api-adapter.js';
import { toStatusError, unary } from '../unary.js';

const STATES: Record<KernelState, pb.ResourceState> = {
  unconfigured: pb.ResourceState.RESOURCE_STATE_UNCONFIGURED,
  configuring: pb.ResourceState.RESOURCE_STATE_CONFIGURING,
  ready: pb.ResourceState.RESOURCE_STATE_READY,
  removing: pb.ResourceState.RESOURCE_STATE_REMOVING,
  unhealthy: pb.ResourceState.RESOURCE_STATE_UNHEALTHY,
};

const MACHINE_STATES = {
  initializing: pb.MachineState.MACHINE_STATE_INITIALIZING,
  running: pb.MachineState.MACHINE_STATE_RUNNING,
  stopping: pb.MachineState.MACHINE_STATE_STOPPING,
  stopped: pb.MachineState.MACHINE_STATE_STOPPING,
} as const;

export interface RobotFacts {
  version: string;
  machineState(): keyof typeof MACHINE_STATES;
  /** The error of the last config that was rejected while the previous one kept running. */
  configError(): string | undefined;
  /** Starts an orderly shutdown; the process exits 0 once every resource is closed. */
  shutdown(): void;
  sessions: Sessions;
  /** A saved, valid config that waits for the maintenance window. */
  pendingConfig(): { revision: number; reason: string; since: Date } | undefined;
}

/** Stops every ready actuator at once; fails afterwards, naming each resource that could not be stopped. */
async function stopAll(access: ResourceAccess): Promise<void> {
  const actuators = access.statuses().filter((s) => s.key === s.name && s.state === 'ready' && actuationOf(s.api));
  const failures: string[] = [];
  await Promise.all(
    actuators.map(async ({ name, api }) => {
      try {
        const remote = access.resource<Record<string, () => Promise<void>>>(name, api);
        await remote[actuationOf(api)!.stop]();
      } catch (err) {
        failures.push(`${name}: ${toStatusError(err).message}`);
      }
    }),
  );
  if (failures.length)
    throw new StatusError(status.INTERNAL, `StopAll could not stop ${failures.length} of ${actuators.length} actuators: ${failures.sort().join('; ')}`);
}

function resourceName(api: string, name: string): pb.ResourceNamesResponse['resources'][number] {
  const [namespace = '', type = '', subtype = ''] = api.split(':');
  return { namespace, type, subtype, name };
}

export function robotService(access: ResourceAccess, facts: RobotFacts): pb.RobotServiceServer {
  return {
    resourceNames: unary<pb.ResourceNamesRequest, pb.ResourceNamesResponse>(() => ({
      resources: access
        .statuses()
        .filter((s) => s.key === s.name)
        .map((s) => resourceName(s.api, s.name)),
    })),
    getMachineStatus: unary<pb.GetMachineStatusRequest, pb.GetMachineStatusResponse>(() => ({
      state: MACHINE_STATES[facts.machineState()],
      configError: facts.configError() ?? '',
      pendingConfig: facts.pendingConfig(),
      resources: access.statuses().map((s) => ({
        name: resourceName(s.api, s.name),
        state: STATES[s.state],
        error: s.error ?? '',
        lastUpdated: s.lastUpdated,
        model: s.model,
        revision: s.revision,
      })),
    })),
    shutdown: unary<pb.ShutdownRequest, pb.ShutdownResponse>(() => {
      // Answer first; the shutdown closes this very server.
      setImmediate(() => facts.shutdown());
      return {};
    }),
    startSession: unary<pb.StartSessionRequest, pb.StartSessionResponse>((r) => {
      const { id, windowMs } = facts.sessions.start(r.resume || undefined);
      return { id, heartbeatWindow: { seconds: Math.floor(windowMs / 1000), nanos: (windowMs % 1000) * 1_000_000 } };
    }),
    sendSessionHeartbeat: unary<pb.SendSessionHeartbeatRequest, pb.SendSessionHeartbeatResponse>((r) => {
      facts.sessions.touch(r.id, 'id');
      return {};
    }),
    stopAll: unary<pb.StopAllRequest, pb.StopAllResponse>(async () => {
      await stopAll(access);
      return {};
    }),
    getVersion: unary<pb.GetVersionRequest, pb.GetVersionResponse>(() => ({ platform: 'platform-server', version: facts.version, apiVersion: 'v1' })),
  };
}
