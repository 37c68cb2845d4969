// The session of the gRPC call being handled. The gRPC layer sets it from the `platform-sid` metadata
// around each handler; the resource access reads it when a handler reaches a driver, without every
// handler having to pass it along.
import { AsyncLocalStorage } from 'node:async_hooks';

export const callSession = new AsyncLocalStorage<string | undefined>();
