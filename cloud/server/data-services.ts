// Registers DataSyncService, DataService and DatasetService on the cloud's gRPC server.
import type { Server } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Authorizer } from '../auth/authorizer.js';
import { addDatasetService } from '../dataset/dataset-service.js';
import { addDataSyncService } from '../datasync/data-sync-service.js';
import type { QueryEngineSlot } from '../kit/query-engine-slot.js';
import type { Store } from '../store/store.js';
import { addDataService } from '../data/data-service.js';
import { PartDirectory } from '../data/parts.js';

export interface DataServiceDeps {
  store: Store;
  authorizer: Authorizer;
  queryEngine: QueryEngineSlot;
  logger: Logger;
}

export function addDataServices(server: Server, deps: DataServiceDeps): void {
  const parts = new PartDirectory(deps.store);
  addDataSyncService(server, { store: deps.store, authorizer: deps.authorizer, parts });
  addDataService(server, { store: deps.store, authorizer: deps.authorizer, parts, queryEngine: deps.queryEngine });
  addDatasetService(server, deps.store, deps.authorizer);
}
