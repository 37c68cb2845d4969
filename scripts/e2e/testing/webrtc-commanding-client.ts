// Test helper run as its own process: dials a machine over WebRTC with the TypeScript client (sessions on,
// heartbeats over the data channel), sets motor `m` going, prints `commanded m in session <id>` and keeps
// heartbeating until it is killed: the test kills it with SIGKILL, so the machine hears no goodbye (no
// data-channel close, no SCTP abort), as with a crashed laptop or a cut network.
// Arguments: <signaling address> <host> [<API key id> <API key>] (the key for the cloud's signaling).
import { MotorServiceClient } from '../../../gen/platform/component/motor/v1/motor.js';
import { RobotClient } from '../../../cloud/client/robot-client.js';

/** Bounds an orphan's life should the test process die without killing it. */
const MAX_LIFE_MS = 120_000;

const [signalingAddress, host, keyId, key] = process.argv.slice(2);
const credentials = keyId && key ? { type: 'api-key' as const, authEntity: keyId, payload: key } : undefined;
const client = await RobotClient.connect({ webrtc: { signalingAddress, host, credentials } });
if (client.transport !== 'webrtc') throw new Error(`expected a WebRTC connection, got ${client.transport}`);
const motors = client.service(MotorServiceClient);
await new Promise<void>((resolve, reject) => motors.setPower({ name: 'm', powerPct: 0.6 }, (err) => (err ? reject(err) : resolve())));
process.stdout.write(`commanded m in session ${client.session}\n`);
// The client's heartbeat timer does not hold the process: this does.
setTimeout(() => process.exit(3), MAX_LIFE_MS);
