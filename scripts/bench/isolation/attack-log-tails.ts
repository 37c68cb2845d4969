// Issue 27 #7 (logs): the attacker opens TAILS TailRobotPartLogs streams on its own part and never reads
// them (raw HTTP/2 streams, paused: no flow-control credit is returned), while its machine part uploads
// log batches of 10,000 entries as fast as the cloud takes them. Before back-pressure, 40 such tails took
// the cloud to 6.1 GB.
import { connect } from 'node:http2';
import { TailRobotPartLogsRequest } from '../../../gen/platform/app/v1/robot_part.js';
import { RobotServiceClient } from '../../../gen/platform/app/v1/robot_part.js';
import { credentials } from '@grpc/grpc-js';
import type { Attack } from './harness.js';
import { bearerOf, Outcomes, partClient } from './ingest-tools.js';

const TAILS = Number(process.env.BENCH_LOG_TAILS ?? 40);

export const logTails: Attack = {
  name: 'log-tails',
  finding: 'issue 27 #7',
  describe: `${TAILS} log tails that never read, while the attacker's part uploads batches of 10,000 log entries of 200 bytes in a loop`,
  async start({ address, attacker }) {
    const userMd = await bearerOf(attacker.client);
    const part = partClient(address, attacker);
    const partMd = await bearerOf(part);
    const session = connect(`http://${address}`);
    const request = TailRobotPartLogsRequest.encode({ id: attacker.partId, levels: [] }).finish();
    const frame = Buffer.alloc(5 + request.length);
    frame.writeUInt32BE(request.length, 1);
    frame.set(request, 5);
    const ends = new Outcomes();
    const tails = Array.from({ length: TAILS }, () => {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/platform.app.v1.AppService/TailRobotPartLogs',
        'content-type': 'application/grpc',
        te: 'trailers',
        authorization: String(userMd.get('authorization')[0]),
      });
      stream.end(frame);
      stream.pause();
      stream.on('trailers', (t) => ends.add(`grpc ${String(t['grpc-status'])}`));
      // A tail refused at once answers trailers-only: its status comes in the response headers.
      stream.on('response', (h) => h['grpc-status'] !== undefined && ends.add(`grpc ${String(h['grpc-status'])} at once`));
      stream.on('error', () => ends.add('error'));
      return stream;
    });
    const robot = new RobotServiceClient(address, credentials.createInsecure());
    let stop = false;
    let sent = 0;
    const failures = new Outcomes();
    const loop = (async () => {
      while (!stop) {
        const logs = Array.from({ length: 10_000 }, (_, i) => ({
          time: new Date(),
          level: 'info',
          loggerName: 'flood',
          message: `${sent + i} ${'x'.repeat(190)}`,
          fields: {},
        }));
        await new Promise<void>((resolve) =>
          robot.log({ id: attacker.partId, logs }, partMd, (err) => {
            if (err) failures.add(String(err.code));
            else sent += logs.length;
            resolve();
          }),
        );
      }
    })();
    return async () => {
      stop = true;
      await loop;
      // Read the tails now, to see how they ended.
      await Promise.all(
        tails.map(
          (s) =>
            new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 5000);
              s.on('close', () => {
                clearTimeout(timer);
                resolve();
              });
              s.resume();
            }),
        ),
      );
      for (const s of tails) s.close();
      session.close();
      robot.close();
      part.close();
      return `${sent} log entries uploaded (${failures} failed uploads); the tails ended with ${ends}`;
    };
  },
};
