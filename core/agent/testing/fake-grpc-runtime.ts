// A fake platform-server with just enough gRPC for the maintenance window: RobotService.GetMachineStatus
// and SensorService.GetReadings. The sensor's readings and the machine status come from JSON files
// that the test rewrites: FAKE_SENSOR_FILE ({"<key>": true|false}) and FAKE_STATUS_FILE (optional,
// {"configuring": n}). Start and SIGTERM are logged to FAKE_LOG like the shell fakes.
import { Metadata, Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { appendFileSync, readFileSync } from 'node:fs';
import { SensorServiceService, type SensorServiceServer } from '../../../gen/platform/component/sensor/v1/sensor.js';
import { MachineState, ResourceState, RobotServiceService, type RobotServiceServer } from '../../../gen/platform/robot/v1/robot.js';

const log = process.env.FAKE_LOG!;
const tag = process.env.FAKE_TAG ?? 'grpc';
appendFileSync(log, `start ${tag} ${process.pid} FOO=${process.env.FOO ?? ''} BAR=${process.env.BAR ?? ''} args=${process.argv.slice(2).join(' ')}\n`);

const readJson = (file: string | undefined): Record<string, unknown> => {
  if (!file) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
};
const unimplemented = (_call: unknown, cb: (err: ServiceError) => void) =>
  cb(Object.assign(new Error('fake runtime'), { code: status.UNIMPLEMENTED, details: 'fake runtime', metadata: new Metadata() }));

const server = new Server();
const robot: RobotServiceServer = {
  resourceNames: unimplemented,
  shutdown: unimplemented,
  getVersion: unimplemented,
  startSession: unimplemented,
  sendSessionHeartbeat: unimplemented,
  stopAll: unimplemented,
  getConfig: unimplemented,
  saveConfig: unimplemented,
  streamLogs: (call) => call.emit('error', { code: status.UNIMPLEMENTED, details: 'fake runtime' }),
  getMachineStatus: (_call, cb) => {
    const configuring = Number(readJson(process.env.FAKE_STATUS_FILE).configuring ?? 0);
    const resources = Array.from({ length: configuring }, (_, i) => ({
      name: { namespace: 'core', type: 'component', subtype: 'sensor', name: `s${i}` },
      state: ResourceState.RESOURCE_STATE_CONFIGURING,
      error: '',
      model: 'fake',
      revision: 1,
    }));
    cb(null, { state: MachineState.MACHINE_STATE_RUNNING, resources, configError: '' });
  },
};
server.addService(RobotServiceService, robot);
const sensor: SensorServiceServer = {
  doCommand: unimplemented,
  getReadings: (call, cb) => {
    if (call.request.name !== process.env.FAKE_SENSOR_NAME) {
      return cb(Object.assign(new Error('not found'), { code: status.NOT_FOUND, details: `no sensor ${call.request.name}`, metadata: new Metadata() }));
    }
    cb(null, { readings: readJson(process.env.FAKE_SENSOR_FILE) });
  },
};
server.addService(SensorServiceService, sensor);
server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`fake runtime ${tag} serving on 127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => {
  appendFileSync(log, `term ${tag} ${process.pid}\n`);
  server.forceShutdown();
  process.exit(0);
});
