// platform.robot.v1.RobotService: the machine as a whole.
import * as pb from '../../../gen/platform/robot/v1/robot.js';
import type { ResourceState as KernelState } from '../../kernel/resource-node.js';
import type { ResourceAccess } from '../api-adapter.js';
import { unary } from '../unary.js';

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
}

function resourceName(api: string, name: string): pb.ResourceNamesResponse['resources'][number] {
  const [namespace = '', type = '', subtype = ''] = api.split(':');
  return { namespace, type, subtype, name };
}

export function robotService(access: ResourceAccess, facts: RobotFacts): pb.RobotServiceServer {
  return {
    resourceNames: unary<pb.ResourceNamesRequest, pb.ResourceNamesResponse>(() => ({
      resources: access.statuses().filter((s) => s.key === s.name).map((s) => resourceName(s.api, s.name)),
    })),
    getMachineStatus: unary<pb.GetMachineStatusRequest, pb.GetMachineStatusResponse>(() => ({
      state: MACHINE_STATES[facts.machineState()],
      configError: facts.configError() ?? '',
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
    getVersion: unary<pb.GetVersionRequest, pb.GetVersionResponse>(() => ({ platform: 'platform-server', version: facts.version, apiVersion: 'v1' })),
  };
}
