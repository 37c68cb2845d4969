// The gRPC call being handled: its session and, when tracing is on, its span. The gRPC layer sets them
// around each handler (core/grpc/unary.ts: the session from the `platform-sid` metadata, the span from the
// tracing interceptor); the resource access reads them when a handler reaches a driver, without every
// handler having to pass them along. One store for both: each AsyncLocalStorage costs every promise of the
// process an async hook on Node 20, so tracing adds its span here rather than keeping a store of its own.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';

export interface CallContext {
  /** The caller's session id, when the call carries one. */
  readonly session?: string;
  /** The call's server span (its OpenTelemetry context), when tracing is on and the call is traced. */
  readonly trace?: Context;
}

export const callContext = new AsyncLocalStorage<CallContext>();
