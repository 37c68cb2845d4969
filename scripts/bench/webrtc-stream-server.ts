// For npm run bench:webrtc (webrtc.ts): a gRPC server with one server-streaming method, 10 MB in 100
// messages of 100,000 bytes (honouring back-pressure), that also answers WebRTC offers through
// SignalingService on its port with the runtime's own code (WebRtcAnswerer bridging each call on the
// data channel to this server, core/webrtc/). Prints `serving on <address>`, then serves until killed.
import { Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { WebRtcAnswerer } from '../../core/webrtc/answerer.js';
import { localSignaling } from '../../core/webrtc/local-signaling.js';
import { SignalingServiceService } from '../../gen/platform/rpc/webrtc/v1/signaling.js';

export const STREAM_MESSAGES = 100;
export const STREAM_MESSAGE_BYTES = 100_000;

const passthrough = (b: Buffer) => b;
export const STREAM_METHOD = {
  path: '/platform.bench.v1.BenchService/Stream',
  requestStream: false,
  responseStream: true,
  requestSerialize: passthrough,
  requestDeserialize: passthrough,
  responseSerialize: passthrough,
  responseDeserialize: passthrough,
};

async function main(): Promise<void> {
  const server = new Server();
  const payload = Buffer.alloc(STREAM_MESSAGE_BYTES, 7);
  server.addService(
    { stream: STREAM_METHOD },
    {
      stream: (call: ServerWritableStream<Buffer, Buffer>) => {
        let sent = 0;
        const more = () => {
          while (sent < STREAM_MESSAGES) {
            sent++;
            if (!call.write(payload)) return void call.once('drain', more);
          }
          call.end();
        };
        more();
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const answerer = new WebRtcAnswerer(`127.0.0.1:${port}`);
  server.addService(SignalingServiceService, localSignaling(answerer));
  process.once('SIGTERM', () => {
    answerer.stop();
    server.forceShutdown();
  });
  console.log(`webrtc-stream-server serving on 127.0.0.1:${port}`);
}

// Only when run as a program; webrtc.ts imports its constants.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
