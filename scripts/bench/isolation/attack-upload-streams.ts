// Issue 27 #4: the attacker's machine part opens upload streams and leaves them idle (each held a temp
// file: 19,500 idle streams held 19,531 descriptors), and cancels uploads mid-stream, over and over.
// Reported: the outcomes, the cloud's open descriptors at the start, at their peak and after.
import { status, type ClientWritableStream, type ServiceError } from '@grpc/grpc-js';
import { DataType, FileUploadRequest, FileUploadResponse } from '../../../gen/platform/app/datasync/v1/data_sync.js';
import type { Attack } from './harness.js';
import { bearerOf, fdCount, Outcomes, partClient, rawClient } from './ingest-tools.js';

const IDLE = Number(process.env.BENCH_IDLE_STREAMS ?? 2000);
const PATH = '/platform.app.datasync.v1.DataSyncService/FileUpload';

export const uploadStreams: Attack = {
  name: 'upload-streams',
  finding: 'issue 27 #4',
  describe: `the attacker's part opens ${IDLE} upload streams that send a first chunk and then nothing, and loops uploads cancelled mid-stream`,
  async start({ address, attacker, pid }) {
    const part = partClient(address, attacker);
    const md = await bearerOf(part);
    const clients = Array.from({ length: 8 }, () => rawClient(address));
    const outcomes = new Outcomes();
    const fdStart = fdCount(pid);
    let fdPeak = fdStart;
    const fdSampler = setInterval(() => (fdPeak = Math.max(fdPeak, fdCount(pid))), 100);
    const open = (i: number, uploadId: string) => {
      let call!: ClientWritableStream<FileUploadRequest>;
      const done = new Promise<void>((resolve) => {
        call = clients[i % clients.length].makeClientStreamRequest(
          PATH,
          (m: FileUploadRequest) => Buffer.from(FileUploadRequest.encode(m).finish()),
          (b: Buffer) => FileUploadResponse.decode(b),
          md,
          (err: ServiceError | null) => {
            outcomes.add(err ? (status[err.code] ?? String(err.code)) : 'OK');
            resolve();
          },
        );
      });
      call.write({
        metadata: {
          partId: attacker.partId,
          componentType: '',
          componentName: '',
          methodName: '',
          type: DataType.DATA_TYPE_FILE,
          fileName: 'x.bin',
          methodParameters: undefined,
          fileExtension: '.bin',
          tags: [],
          datasetIds: [],
          mimeType: '',
          uploadId,
        },
      });
      call.write({ fileContents: { data: Buffer.alloc(64 * 1024) } });
      return { call, done };
    };
    const idle = Array.from({ length: IDLE }, (_, i) => open(i, `idle-${i}`));
    let stop = false;
    let cancelled = 0;
    const cancelLoop = (async () => {
      while (!stop) {
        const { call, done } = open(cancelled, `cut-${cancelled}`);
        await new Promise((r) => setTimeout(r, 20));
        call.cancel();
        await done;
        cancelled++;
      }
    })();
    return async () => {
      stop = true;
      await cancelLoop;
      for (const { call } of idle) call.cancel();
      await Promise.all(idle.map((s) => s.done));
      await new Promise((r) => setTimeout(r, 500));
      clearInterval(fdSampler);
      const fdEnd = fdCount(pid);
      for (const c of clients) c.close();
      part.close();
      return `outcomes ${outcomes}, ${cancelled} uploads cancelled mid-stream; cloud descriptors ${fdStart} at the start, peak ${fdPeak}, ${fdEnd} after`;
    };
  },
};
