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
import type { Server, ServiceDefinition } from '@grpc/grpc-js';
import { invalidArgument, toServiceError } from '../../core/serving/status-error.js';

export function unary<Req, Res>(fn: (request: Req, metadata: Metadata) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const bad = undecodable(call.request);
    if (bad !== undefined) return callback(toServiceError(invalidArgument(`request: cannot be decoded (${bad}); nest it less deeply`)) as ServiceError);
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
    const bad = undecodable(call.request);
    if (bad !== undefined) {
      call.emit('error', toServiceError(invalidArgument(`request: cannot be decoded (${bad}); nest it less deeply`)));
      return;
    }
    fn(call).then(
      () => call.end(),
      // grpc-js ends a server stream with an error status when the call emits 'error'.
      (err) => call.emit('error', toServiceError(err)),
    );
  };
}

const UNDECODABLE = Symbol('undecodable request');

/** What a tolerant definition hands the handler when the request bytes could not be decoded. */
export function undecodable(request: unknown): string | undefined {
  return request !== null && typeof request === 'object' ? (request as { [UNDECODABLE]?: string })[UNDECODABLE] : undefined;
}

/**
 * A service definition whose request decoding never throws. grpc-js answers a decoding error with
 * INTERNAL ("Error deserializing request"), but a request too deeply nested to decode is the caller's
 * error: the marker this leaves lets the handler adapters answer INVALID_ARGUMENT instead.
 */
export function tolerantDefinition<D extends ServiceDefinition>(definition: D): D {
  const out: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition)) {
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        try {
          return method.requestDeserialize(bytes);
        } catch (err) {
          return { [UNDECODABLE]: err instanceof Error ? err.message : String(err) };
        }
      },
    };
  }
  return out as D;
}

/** Makes every service added to `server` tolerant (see tolerantDefinition). */
export function decodeErrorsAsInvalidArgument(server: Server): Server {
  const add = server.addService.bind(server);
  server.addService = (definition, implementation) => add(tolerantDefinition(definition), implementation);
  return server;
}
