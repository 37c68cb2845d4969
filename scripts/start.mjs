#!/usr/bin/env node
// `npm start`: runs platform-server on the example config and, once it serves, prints how to call it.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const config = process.argv[2] ?? join(root, 'examples', 'fake.json');
const server = spawn(process.execPath, [join(root, 'dist', 'core', 'server', 'main.js'), '-config', config], { stdio: ['inherit', 'pipe', 'inherit'] });

let printed = false;
server.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const match = !printed && /platform-server serving on (\S+)/.exec(chunk.toString());
  if (!match) return;
  printed = true;
  const address = match[1];
  process.stdout.write(`
  The example machine is up: a simulated board "board1" and a simulated sensor "thermometer".
  Call it from another terminal (gRPC reflection is on, so grpcurl needs no proto files):

    grpcurl -plaintext ${address} list
    grpcurl -plaintext -d '{"name":"thermometer"}' ${address} platform.component.sensor.v1.SensorService/GetReadings
    grpcurl -plaintext -d '{"name":"board1","pin":"12","duty_pct":0.5}' ${address} platform.component.board.v1.BoardService/SetPWM
    grpcurl -plaintext ${address} platform.robot.v1.RobotService/GetMachineStatus

  or from Node, with the generated client:

    node -e "import('./dist/gen/platform/component/sensor/v1/sensor.js').then(({SensorServiceClient}) => new SensorServiceClient('${address}', require('@grpc/grpc-js').credentials.createInsecure()).getReadings({name:'thermometer'}, (e, r) => { console.log(e ?? r.readings); process.exit(); }))"

  Edit ${config} and save: the runtime reconfigures live. Ctrl-C stops it.

`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 1));
