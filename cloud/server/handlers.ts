// Adapters from async functions to grpc-js handlers: whatever a handler throws becomes a gRPC status
// (StatusError keeps its code; anything else is INTERNAL), so a bad request never crashes the server.
import type {
  handleClientStreamingCall,
  handleServerStreamingCall,
  handleUnaryCall,
  Metadata,
  ServerReadableStream,
  ServerWritableStream,
  ServiceError,
} from '@grpc/grpc-js';
import { toServiceError } from '../../core/shared/status-error.js';

export function unary<Req, Res>(fn: (request: Req, metadata: Metadata) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    fn(call.request, call.metadata).then(
      (response) => callback(null, response),
      (err) => callback(toServiceError(err) as ServiceError),
    );
  };
}

export function clientStream<Req, Res>(fn: (call: ServerReadableStream<Req, Res>) => Promise<Res>): handleClientStreamingCall<Req, Res> {
  return (call, callback) => {
    fn(call).then(
      (response) => callback(null, response),
      (err) => callback(toServiceError(err) as ServiceError),
    );
  };
}

export function serverStream<Req, Res>(fn: (call: ServerWritableStream<Req, Res>) => Promise<void>): handleServerStreamingCall<Req, Res> {
  return (call) => {
    fn(call).then(
      () => call.end(),
      // grpc-js ends a server stream with an error status when the call emits 'error'.
      (err) => call.emit('error', toServiceError(err)),
    );
  };
}
