// The last word on every status a gRPC server sends: its message bounded (bounded-text.ts) and its
// trailing metadata kept small, whoever produced them (a StatusError, a plain Error, a handler's own
// callback, grpc-js itself). Both programs' servers install it, so no input echoed into a status can
// grow the trailers past what HTTP/2 clients read (issue 27, finding 3).
import { Metadata, ServerInterceptingCall, type ServerInterceptor, type ServerOptions } from '@grpc/grpc-js';
import { boundMessage, MAX_MESSAGE_CHARS } from './bounded-text.js';

/** Most bytes of trailing metadata (keys and values) a status may carry besides its message. */
export const MAX_STATUS_METADATA_BYTES = 8192;

/** `metadata` with entries past MAX_STATUS_METADATA_BYTES, or single values over MAX_MESSAGE_CHARS, left out. */
export function boundStatusMetadata(metadata: Metadata): Metadata {
  const entries = Object.entries(metadata.getMap());
  const sizes = entries.map(([key, value]) => key.length + value.length);
  if (sizes.reduce((a, b) => a + b, 0) <= MAX_STATUS_METADATA_BYTES) return metadata;
  const kept = new Metadata();
  let total = 0;
  entries.forEach(([key, value], i) => {
    if (sizes[i] > MAX_MESSAGE_CHARS || total + sizes[i] > MAX_STATUS_METADATA_BYTES) return;
    total += sizes[i];
    kept.set(key, value);
  });
  return kept;
}

export const boundedStatus: ServerInterceptor = (_method, call) =>
  new ServerInterceptingCall(call, {
    sendStatus: (status, next) => {
      const bounded = { ...status };
      if (status.details !== undefined) bounded.details = boundMessage(status.details);
      if (status.metadata) bounded.metadata = boundStatusMetadata(status.metadata);
      next(bounded);
    },
  });

/** Server options with boundedStatus added to whatever interceptors they name. */
export function withBoundedStatus(options: ServerOptions): ServerOptions {
  return { ...options, interceptors: [...(options.interceptors ?? []), boundedStatus] };
}
