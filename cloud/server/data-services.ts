// Registers DataSyncService, DataService and DatasetService on the cloud's gRPC server.
import type { Server } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Authorizer } from '../auth/authorizer.js';
import { addDatasetService } from '../dataset/dataset-service.js';
import { addDataSyncService } from '../datasync/data-sync-service.js';
import type { QueryEngineSlot } from '../kit/query-engine-slot.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { addDataService } from '../data/data-service.js';
import { PartDirectory } from '../data/parts.js';

export interface DataServiceDeps {
  /** The cloud's tables and blobs, in either mode. */
  tables: StoreWithBlobs;
  authorizer: Authorizer;
  queryEngine: QueryEngineSlot;
  logger: Logger;
  /** Where dataset imports keep their zips while they arrive (this node's own: <data-dir>/imports). */
  importsDir: string;
}

export function addDataServices(server: Server, deps: DataServiceDeps): void {
  const parts = new PartDirectory(deps.tables);
  addDataSyncService(server, { store: deps.tables, authorizer: deps.authorizer, parts });
  addDataService(server, { store: deps.tables, authorizer: deps.authorizer, parts, queryEngine: deps.queryEngine });
  addDatasetService(server, deps.tables, deps.authorizer, { importsDir: deps.importsDir });
}
