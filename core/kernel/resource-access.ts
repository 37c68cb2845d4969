// What the kernel lends to the layers that serve resources (the gRPC API adapters) and to its own
// maintenance check: proxies of ready resources and their statuses, nothing of workers or the graph.
// It lives in the kernel, which implements it, so that core/grpc depends on core/kernel and never the
// other way round.
import type { Context } from '@opentelemetry/api';
import type { Api } from '../../plugins/api.js';
import type { Remote } from '../../plugins/contract.js';
import type { ResourceStatus } from './resource-node.js';

export interface ResourceAccess {
  /**
   * The proxy of a ready resource of that API, typed by the API's token (`resource(name, SENSOR_API)` is a
   * `Remote<Sensor>`); throws NOT_FOUND or UNAVAILABLE otherwise. An API known only at run time (DoCommand,
   * StopAll, a module's API) is named with `defineApi<Interface>(api)`, which states what it expects.
   * `trace`, the span context of the gRPC call being served (when traced), is the parent of the spans of
   * the calls made through this proxy (passed explicitly: platform-server keeps no async trace context).
   */
  resource<T>(name: string, api: Api<T>, trace?: Context): Remote<T>;
  statuses(): ResourceStatus[];
}
