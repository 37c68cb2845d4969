// The maintenance window (SPEC.md "maintenance" and "Agent behaviour"): restarts that make the machine
// unavailable (an env change, a new runtime version, the agent's own update) wait until the configured
// sensor says maintenance is allowed and the runtime is not processing configuration changes. The
// sensor is read over the runtime's own gRPC API at the address of its `serving` line.
import { credentials, Metadata, type CallOptions, type ServiceError } from '@grpc/grpc-js';
import { SensorServiceClient, type GetReadingsRequest, type GetReadingsResponse } from '../../gen/platform/component/sensor/v1/sensor.js';
import {
  MachineState,
  ResourceState,
  RobotServiceClient,
  type GetMachineStatusRequest,
  type GetMachineStatusResponse,
} from '../../gen/platform/robot/v1/robot.js';
import { sensorResourceName, type MaintenanceConfig } from './maintenance-config.js';

export type MaintenanceVerdict = { allowed: true; reason: string } | { allowed: false; reason: string };

type Unary<Req, Res> = (req: Req, md: Metadata, opts: Partial<CallOptions>, cb: (err: ServiceError | null, res: Res) => void) => unknown;

function unary<Req, Res>(method: Unary<Req, Res>, req: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    method(req, new Metadata(), { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

export class MaintenanceGate {
  constructor(private readonly timeoutMs = 5000) {}

  /**
   * Whether a disruptive restart may happen now. No window configured, or a runtime that is not
   * serving, allows it. Otherwise the runtime must be RUNNING with no resource configuring or removing,
   * and the sensor's key must not be false (a missing or non-boolean key allows it, a read error blocks).
   */
  async check(config: MaintenanceConfig | undefined, runtimeAddress: string | undefined): Promise<MaintenanceVerdict> {
    if (!config) return { allowed: true, reason: 'no maintenance window configured' };
    if (!runtimeAddress) return { allowed: true, reason: 'platform-server is not serving' };
    const creds = credentials.createInsecure();
    const robot = new RobotServiceClient(runtimeAddress, creds);
    const sensor = new SensorServiceClient(runtimeAddress, creds);
    try {
      try {
        const status = await unary(robot.getMachineStatus.bind(robot) as Unary<GetMachineStatusRequest, GetMachineStatusResponse>, {}, this.timeoutMs);
        if (status.state !== MachineState.MACHINE_STATE_RUNNING) return { allowed: false, reason: 'platform-server is not in the running state' };
        const busy = status.resources.filter((r) => r.state === ResourceState.RESOURCE_STATE_CONFIGURING || r.state === ResourceState.RESOURCE_STATE_REMOVING);
        if (busy.length) return { allowed: false, reason: `platform-server is processing configuration changes (${busy.length} resource(s))` };
      } catch (err) {
        return { allowed: false, reason: `cannot read the machine status: ${(err as Error).message}` };
      }
      const name = sensorResourceName(config.sensor_name);
      let readings: Record<string, unknown>;
      try {
        readings = (await unary(sensor.getReadings.bind(sensor) as Unary<GetReadingsRequest, GetReadingsResponse>, { name }, this.timeoutMs)).readings;
      } catch (err) {
        return { allowed: false, reason: `cannot read maintenance sensor ${config.sensor_name}: ${(err as Error).message}` };
      }
      const value = readings[config.maintenance_allowed_key];
      if (value === false) return { allowed: false, reason: `${config.sensor_name} reports ${config.maintenance_allowed_key} = false` };
      return {
        allowed: true,
        reason: typeof value === 'boolean' ? `${config.maintenance_allowed_key} = true` : `${config.maintenance_allowed_key} is not a boolean`,
      };
    } finally {
      robot.close();
      sensor.close();
    }
  }
}
