// Test helper run as its own process: connects to platform-server with the TypeScript client (sessions
// on by default), sets the power of the motors named on the command line, and exits without a goodbye,
// as a crashed or killed client would.
import { MotorServiceClient } from '../../../gen/platform/component/motor/v1/motor.js';
import { RobotClient } from '../../../cloud/client/robot-client.js';

const [address, ...motors] = process.argv.slice(2);
const client = await RobotClient.connect({ address });
const motorClient = client.service(MotorServiceClient);
for (const name of motors) {
  await new Promise<void>((resolve, reject) => motorClient.setPower({ name, powerPct: 0.8 }, (err) => (err ? reject(err) : resolve())));
}
process.stdout.write(`commanded ${motors.join(',')} in session ${client.session}\n`);
process.exit(0);
