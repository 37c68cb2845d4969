// The anchor of bench:runtime's GetReadings figure: platform-server's own gRPC server and sensor API,
// serving the same fake sensor driver in its main thread instead of in a worker. It runs as its own
// process, like platform-server, so that the only difference the benchmark sees is the worker hop.
import 'reflect-metadata';
import fakeSensor from '../../drivers/sensor/fake/driver.js';
import type { ResourceAccess } from '../../core/grpc/api-adapter.js';
import { startRuntimeServer } from '../../core/grpc/runtime-server.js';
import { Sessions } from '../../core/session/sessions.js';
import { LogRing } from '../../core/logging/log-ring.js';

const attributes = { readings: { temperature_c: 21.5, i: 0 }, count_calls: false };
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const driver = await fakeSensor({
  name: 's0',
  api: 'core:component:sensor',
  model: 'fake',
  attributes,
  dependencies: {
    get: () => {
      throw new Error('no dependencies');
    },
    names: () => [],
  },
  logger: silent,
});

const access: ResourceAccess = {
  resource: (name) => {
    if (name !== 's0') throw new Error(`no resource named "${name}"`);
    return driver as never;
  },
  statuses: () => [],
};

const server = await startRuntimeServer(
  access,
  {
    version: '0.0.0',
    machineState: () => 'running',
    configError: () => undefined,
    shutdown: () => undefined,
    sessions: new Sessions(
      () => 2000,
      async () => undefined,
      silent,
    ),
    pendingConfig: () => undefined,
    logs: new LogRing(),
    config: {
      view: () => ({ configJson: '{}', source: 'file', path: '', editHint: '', errors: [], revision: 1, resourceErrors: [] }),
      save: () => Promise.reject(new Error('the in-process anchor has no config file')),
    },
  },
  { bindAddress: 'localhost:0' },
);
process.stdout.write(`in-process anchor serving on ${server.address}\n`);
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
