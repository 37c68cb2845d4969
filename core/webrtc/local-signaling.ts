// SignalingService on the runtime's own gRPC port, for the LAN: a client that reaches the machine's port
// but wants WebRTC (or a page that speaks it) signals here, and the machine answers its own offers. Answer
// is the cloud's and is not served; the runtime's port has no authentication of its own, as for every
// other call on it.
import { randomUUID } from 'node:crypto';
import { status, type sendUnaryData, type ServerUnaryCall, type ServerWritableStream } from '@grpc/grpc-js';
import {
  type CallRequest,
  type CallResponse,
  type CallUpdateRequest,
  type CallUpdateResponse,
  type OptionalWebRTCConfigResponse,
  type SignalingServiceServer,
} from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { fromWireCandidate, toWireCandidate } from '../serving/webrtc/candidates.js';
import { TooManyPeersError, type Answered, type WebRtcAnswerer } from './answerer.js';

export function localSignaling(answerer: WebRtcAnswerer): SignalingServiceServer {
  const calls = new Map<string, Answered>();
  return {
    call: (stream: ServerWritableStream<CallRequest, CallResponse>) => {
      const uuid = randomUUID();
      answerer.answer(stream.request.sdp).then(
        (answered) => {
          // A caller that left before its answer never sends candidates: its peer goes at once.
          if (stream.cancelled) return answered.close();
          // The entry lives as long as the peer (closed by the answerer's connect timeout at the latest),
          // so the map is bounded by the answerer's peers.
          calls.set(uuid, answered);
          answered.onClose(() => {
            calls.delete(uuid);
            // A peer closed before its gathering ended (timed out, evicted) sends no more candidates.
            if (!stream.cancelled && !stream.writableEnded) stream.end();
          });
          // A caller cancelling after the answer is normal (the client does once its channel opens): the
          // peer stays, and the connect timeout or eviction ends one that never connects.
          stream.write({ uuid, init: { sdp: answered.answer } });
          answered.onCandidate((candidate) => {
            if (stream.cancelled || stream.writableEnded) return;
            if (candidate) stream.write({ uuid, update: { candidate: toWireCandidate(candidate) } });
            else stream.end();
          });
        },
        (err: Error) =>
          stream.emit('error', {
            code: err instanceof TooManyPeersError ? status.RESOURCE_EXHAUSTED : status.INVALID_ARGUMENT,
            details: err.message,
          }),
      );
    },
    callUpdate: (call: ServerUnaryCall<CallUpdateRequest, CallUpdateResponse>, callback: sendUnaryData<CallUpdateResponse>) => {
      const answered = calls.get(call.request.uuid);
      if (!answered) return callback({ code: status.NOT_FOUND, details: `uuid: no call ${JSON.stringify(call.request.uuid.slice(0, 64))} is being set up` });
      if (call.request.done || call.request.error) {
        if (call.request.error) answered.close();
        calls.delete(call.request.uuid);
        return callback(null, {});
      }
      let candidate;
      try {
        candidate = fromWireCandidate(call.request.candidate);
      } catch (err) {
        return callback({ code: status.INVALID_ARGUMENT, details: (err as Error).message });
      }
      answered.addRemoteCandidate(candidate).then(
        () => callback(null, {}),
        (err: Error) => callback({ code: status.INVALID_ARGUMENT, details: `candidate: ${err.message}` }),
      );
    },
    answer: (stream) => {
      stream.emit('error', { code: status.UNIMPLEMENTED, details: "a machine answers its own offers; Answer is served by the cloud's signaling" });
    },
    optionalWebRtcConfig: (_call: ServerUnaryCall<unknown, OptionalWebRTCConfigResponse>, callback: sendUnaryData<OptionalWebRTCConfigResponse>) =>
      callback(null, { config: { additionalIceServers: [], disableTrickle: false } }),
  };
}
