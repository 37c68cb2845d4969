// What the kernel lends to the layers that serve resources (the gRPC API adapters) and to its own
// maintenance check: proxies of ready resources and their statuses, nothing of workers or the graph.
// It lives in the kernel, which implements it, so that core/grpc depends on core/kernel and never the
// other way round.
import type { Remote } from '../../plugins/contract.js';
import type { ResourceStatus } from './resource-node.js';

export interface ResourceAccess {
  /** The proxy of a ready resource of that api; throws NOT_FOUND or UNAVAILABLE otherwise. */
  resource<T>(name: string, api: string): Remote<T>;
  statuses(): ResourceStatus[];
}
