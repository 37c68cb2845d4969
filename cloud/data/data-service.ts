// platform.app.data.v1.DataService: authenticates each call, checks scope and role, then hands the
// request to the tabular/binary readers or, for SQL/MQL, to the registered QueryEngine.
import type { Metadata, Server, ServerWritableStream } from '@grpc/grpc-js';
import { deserialize, serialize } from 'bson';
import { invalidArgument, unavailable } from '../../core/serving/status-error.js';
import {
  DataServiceService,
  TabularDataSourceType,
  type DataServiceServer,
  type ExportTabularDataRequest,
  type ExportTabularDataResponse,
  type TabularDataByMQLRequest,
} from '../../gen/platform/app/data/v1/data.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { serverStream, unary } from '../kit/handlers.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { BinaryDataStore, checkTagList, idsOf } from './binary-data.js';
import type { PartDirectory } from './parts.js';
import type { QueryEngine, QueryEngineSlot, TabularDataSourceTypeName } from '../kit/query-engine-slot.js';
import { writeData } from '../kit/stream-write.js';
import { exportMcap } from './mcap-export.js';
import { pageOf } from './rows.js';
import { deleteTabularData, exportTabularData, getLatestTabularData, tabularDataByFilter } from './tabular-data.js';

export interface DataServiceDeps {
  /** The cloud's tables and blobs: the DuckDB Store, or PostgreSQL with S3 (issue 33). */
  store: StoreWithBlobs;
  authorizer: Authorizer;
  parts: PartDirectory;
  queryEngine: QueryEngineSlot;
}

const sourceTypeNames: Partial<Record<TabularDataSourceType, TabularDataSourceTypeName>> = {
  [TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_STANDARD]: 'STANDARD',
  [TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE]: 'HOT_STORAGE',
  [TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK]: 'PIPELINE_SINK',
};

/** MQL source options; use_recent_data (deprecated) means HOT_STORAGE when no source type is given. */
export function mqlSourceOf(request: TabularDataByMQLRequest): { sourceType: TabularDataSourceTypeName; pipelineId?: string } {
  const type = request.dataSource?.type ?? TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_UNSPECIFIED;
  let sourceType: TabularDataSourceTypeName = request.useRecentData ? 'HOT_STORAGE' : 'STANDARD';
  if (type !== TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_UNSPECIFIED) {
    const name = sourceTypeNames[type];
    if (!name) throw invalidArgument(`data_source.type ${type} is not a TabularDataSourceType`);
    sourceType = name;
  }
  const pipelineId = request.dataSource?.pipelineId;
  if (sourceType === 'PIPELINE_SINK' && !pipelineId) {
    throw invalidArgument('data_source.pipeline_id is required when data_source.type is TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK');
  }
  return pipelineId ? { sourceType, pipelineId } : { sourceType };
}

export function addDataService(server: Server, deps: DataServiceDeps): void {
  const { store, authorizer, parts } = deps;
  const binary = new BinaryDataStore(store, authorizer);
  /** A key principal (parts may only upload). */
  const caller = async (md: Metadata): Promise<KeyPrincipal> => {
    const p = await authorizer.authenticate(md);
    return authorizer.checkOrg(p, p.organizationId);
  };
  const engine = (): QueryEngine => {
    if (!deps.queryEngine.engine) {
      throw unavailable('the SQL/MQL query engine is not registered in this platform-cloud (the cloud/query extension is missing)');
    }
    return deps.queryEngine.engine;
  };
  const orgField = (id: string) => {
    if (!id) throw invalidArgument('organization_id is required');
    return id;
  };
  const bsonDocs = (docs: Record<string, unknown>[]) => docs.map((d) => Buffer.from(serialize(d)));
  /** The part of a source, checked for read access by the caller. */
  const readablePart = async (md: Metadata, partId: string) => {
    const p = await caller(md);
    const part = await parts.require(partId);
    authorizer.check(p, { organizationId: part.organizationId, locationId: part.locationId, machineId: part.machineId });
    return part;
  };

  const impl: DataServiceServer = {
    tabularDataByFilter: unary(async (req, md) => tabularDataByFilter(store, await caller(md), req)),
    tabularDataBySql: unary(async (req, md) => {
      authorizer.checkOrg(await caller(md), orgField(req.organizationId), { level: 'organization' });
      if (!req.sqlQuery || req.sqlQuery.trim() === '') throw invalidArgument('sql_query is required');
      return { rawData: bsonDocs(await engine().tabularDataBySQL(req.organizationId, req.sqlQuery)) };
    }),
    tabularDataByMql: unary(async (req, md) => {
      authorizer.checkOrg(await caller(md), orgField(req.organizationId), { level: 'organization' });
      if (req.query.length > 0 && req.mqlBinary.length > 0) throw invalidArgument('query and mql_binary: give the stages in one of them, not both');
      if (req.query.length === 0 && req.mqlBinary.length === 0) throw invalidArgument('query must hold at least one aggregation stage');
      const stages =
        req.query.length > 0
          ? (req.query as Record<string, unknown>[])
          : req.mqlBinary.map((bytes, i) => {
              try {
                return deserialize(bytes) as Record<string, unknown>;
              } catch (err) {
                throw invalidArgument(`mql_binary[${i}] is not a BSON document: ${(err as Error).message}`);
              }
            });
      return { rawData: bsonDocs(await engine().tabularDataByMQL(req.organizationId, stages, mqlSourceOf(req))) };
    }),
    exportTabularData: serverStream(async (call: ServerWritableStream<ExportTabularDataRequest, ExportTabularDataResponse>) => {
      await readablePart(call.metadata, call.request.partId);
      await exportTabularData(store, call.request, async (point) => {
        if (!call.write(point)) await new Promise<void>((resolve) => call.once('drain', () => resolve()));
      });
    }),
    getLatestTabularData: unary(async (req, md) => {
      await readablePart(md, req.partId);
      return getLatestTabularData(store, req);
    }),
    binaryDataByFilter: unary(async (req, md) =>
      binary.byFilter(await caller(md), req.dataRequest?.filter, pageOf(req.dataRequest), {
        includeBinary: req.includeBinary,
        countOnly: req.countOnly,
        includeInternal: req.includeInternalData,
      }),
    ),
    binaryDataByIDs: unary(async (req, md) => {
      const p = await caller(md);
      const data = await binary.byIds(p, idsOf(req.binaryDataIds, req.binaryIds), req.includeBinary);
      return { data, count: data.length };
    }),
    deleteTabularData: unary(async (req, md) => {
      const p = authorizer.checkOrg(await caller(md), orgField(req.organizationId), { role: 'owner' });
      return { deletedCount: await deleteTabularData(store, p, req.deleteOlderThanDays) };
    }),
    deleteBinaryDataByFilter: unary(async (req, md) => ({
      deletedCount: await binary.deleteByFilter(await caller(md), req.filter, req.includeInternalData),
    })),
    deleteBinaryDataByIDs: unary(async (req, md) => ({
      deletedCount: await binary.deleteByIds(await caller(md), idsOf(req.binaryDataIds, req.binaryIds)),
    })),
    addTagsToBinaryDataByIDs: unary(async (req, md) => {
      const p = await caller(md);
      await binary.addTagsByIds(p, idsOf(req.binaryDataIds, req.binaryIds), checkTagList(req.tags));
      return {};
    }),
    addTagsToBinaryDataByFilter: unary(async (req, md) => {
      const p = await caller(md);
      await binary.addTagsByFilter(p, req.filter, checkTagList(req.tags));
      return {};
    }),
    removeTagsFromBinaryDataByIDs: unary(async (req, md) => {
      const p = await caller(md);
      return { deletedCount: await binary.removeTagsByIds(p, idsOf(req.binaryDataIds, req.binaryIds), checkTagList(req.tags)) };
    }),
    removeTagsFromBinaryDataByFilter: unary(async (req, md) => {
      const p = await caller(md);
      return { deletedCount: await binary.removeTagsByFilter(p, req.filter, checkTagList(req.tags)) };
    }),
    tagsByFilter: unary(async (req, md) => ({ tags: await binary.tagsByFilter(await caller(md), req.filter) })),
    addBoundingBoxToImageById: unary(async (req, md) => ({
      bboxId: await binary.addBoundingBox(await caller(md), req.binaryDataId || req.binaryId?.fileId || '', req),
    })),
    removeBoundingBoxFromImageById: unary(async (req, md) => {
      await binary.removeBoundingBox(await caller(md), req.binaryDataId || req.binaryId?.fileId || '', req.bboxId);
      return {};
    }),
    boundingBoxLabelsByFilter: unary(async (req, md) => ({ labels: await binary.labelsByFilter(await caller(md), req.filter) })),
    getDatabaseConnection: unary(async (req, md) => {
      authorizer.checkOrg(await caller(md), orgField(req.organizationId), { level: 'organization' });
      return engine().getDatabaseConnection(req.organizationId);
    }),
    configureDatabaseUser: unary(async (req, md) => {
      authorizer.checkOrg(await caller(md), orgField(req.organizationId), { level: 'organization', role: 'owner' });
      if (!req.password) throw invalidArgument('password is required');
      await engine().configureDatabaseUser(req.organizationId, req.password);
      return {};
    }),
    exportMcap: serverStream(async (call) => {
      const principal = await caller(call.metadata);
      await exportMcap(store, authorizer, principal, call.request.filter, (bytes) => writeData(call, bytes));
    }),
  };
  server.addService(DataServiceService, impl);
}
