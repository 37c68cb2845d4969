#!/usr/bin/env node
// A small client for the README walkthrough: prints a resource's state (and error) from
// GetMachineStatus, then its readings, through the runtime's gRPC API.
//   node dist/plugins/examples/read-sensor.js <address> <sensor name>
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { ResourceState, RobotServiceClient, type GetMachineStatusResponse } from '../../gen/platform/robot/v1/robot.js';

const [address, name] = process.argv.slice(2);
if (!address || !name) {
  process.stderr.write('usage: read-sensor <address, e.g. localhost:8080> <sensor name>\n');
  process.exit(2);
}

const robot = new RobotServiceClient(address, credentials.createInsecure());
const sensors = new SensorServiceClient(address, credentials.createInsecure());

const status = await new Promise<GetMachineStatusResponse>((resolve, reject) => robot.getMachineStatus({}, (err, res) => (err ? reject(err) : resolve(res))));
const resource = status.resources.find((r) => r.name?.name === name);
if (!resource) {
  process.stderr.write(`no resource named ${name}; the machine has ${status.resources.map((r) => r.name?.name).join(', ') || 'none'}\n`);
  process.exit(1);
}
const state = ResourceState[resource.state].replace('RESOURCE_STATE_', '');
process.stdout.write(`${name} (${resource.model}) ${state} revision ${resource.revision}${resource.error ? `: ${resource.error}` : ''}\n`);
try {
  const readings = await new Promise<unknown>((resolve, reject) =>
    sensors.getReadings({ name }, (err: ServiceError | null, res) => (err ? reject(err) : resolve(res.readings))),
  );
  process.stdout.write(`readings ${JSON.stringify(readings)}\n`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`GetReadings failed: ${(err as ServiceError).details ?? (err as Error).message}\n`);
  process.exit(1);
}
