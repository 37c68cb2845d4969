// Registers DataSyncService, DataService and DatasetService on the cloud's gRPC server.
import type { Server } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Authorizer } from '../auth/authorizer.js';
import type { QueryEngineSlot } from '../server/cloud-server.js';
import type { Store } from '../store/store.js';

export interface DataServiceDeps {
  store: Store;
  authorizer: Authorizer;
  queryEngine: QueryEngineSlot;
  logger: Logger;
}

export function addDataServices(_server: Server, _deps: DataServiceDeps): void {}
