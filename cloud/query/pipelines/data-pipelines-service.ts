// DataPipelinesService over gRPC: every call needs an organization-level key of the pipeline's
// organisation; changes need the owner role.
import type { Metadata, Server } from '@grpc/grpc-js';
import { deserialize, serialize } from 'bson';
import {
  DataPipelineRunStatus,
  DataPipelinesServiceService,
  type DataPipeline as DataPipelineMessage,
  type DataPipelinesServiceServer,
} from '../../../gen/platform/app/data/v1/data_pipelines.js';
import { TabularDataSourceType } from '../../../gen/platform/app/data/v1/data.js';
import { invalidArgument } from '../../../core/serving/status-error.js';
import type { Authorizer } from '../../auth/authorizer.js';
import { unary } from '../../kit/handlers.js';
import type { DataPipeline, PipelineSourceType, PipelineStore } from './pipeline-store.js';

function toMessage(p: DataPipeline): DataPipelineMessage {
  return {
    id: p.id,
    organizationId: p.organizationId,
    name: p.name,
    mqlBinary: p.stages.map((s) => Buffer.from(serialize(s))),
    schedule: p.schedule,
    enabled: p.enabled,
    createdOn: p.timeCreated,
    updatedAt: p.timeModified,
    dataSourceType:
      p.sourceType === 'HOT_STORAGE' ? TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE : TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_STANDARD,
  };
}

function sourceOf(type: TabularDataSourceType | undefined): PipelineSourceType {
  switch (type ?? TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_UNSPECIFIED) {
    case TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_UNSPECIFIED:
    case TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_STANDARD:
      return 'STANDARD';
    case TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE:
      return 'HOT_STORAGE';
    default:
      throw invalidArgument('data_source_type: must be STANDARD or HOT_STORAGE (a pipeline cannot read another sink)');
  }
}

export function addDataPipelinesService(server: Server, pipelines: PipelineStore, authorizer: Authorizer): void {
  const orgLevel = async (md: Metadata, organizationId: string, owner = false) => {
    if (!organizationId) throw invalidArgument('organization_id: is required');
    authorizer.checkOrg(await authorizer.authenticate(md), organizationId, { level: 'organization', ...(owner ? { role: 'owner' as const } : {}) });
  };
  /** Loads the pipeline and checks the caller against its organisation. */
  const owned = async (md: Metadata, id: string, owner = false) => {
    const principal = await authorizer.authenticate(md);
    const p = await pipelines.get(id);
    authorizer.checkOrg(principal, p.organizationId, { level: 'organization', ...(owner ? { role: 'owner' as const } : {}) });
    return p;
  };

  const impl: DataPipelinesServiceServer = {
    createDataPipeline: unary(async (req, md) => {
      await orgLevel(md, req.organizationId, true);
      const stages = req.mqlBinary.map((bytes, i) => {
        try {
          return deserialize(bytes) as Record<string, unknown>;
        } catch (err) {
          throw invalidArgument(`mql_binary[${i}]: is not a BSON document: ${(err as Error).message}`);
        }
      });
      const p = await pipelines.create({
        organizationId: req.organizationId,
        name: req.name,
        stages,
        schedule: req.schedule,
        sourceType: sourceOf(req.dataSourceType),
      });
      return { id: p.id };
    }),
    getDataPipeline: unary(async (req, md) => ({ dataPipeline: toMessage(await owned(md, req.id)) })),
    listDataPipelines: unary(async (req, md) => {
      await orgLevel(md, req.organizationId);
      return { dataPipelines: (await pipelines.list(req.organizationId)).map(toMessage) };
    }),
    enableDataPipeline: unary(async (req, md) => {
      await owned(md, req.id, true);
      await pipelines.setEnabled(req.id, true);
      return {};
    }),
    disableDataPipeline: unary(async (req, md) => {
      await owned(md, req.id, true);
      await pipelines.setEnabled(req.id, false);
      return {};
    }),
    deleteDataPipeline: unary(async (req, md) => {
      await owned(md, req.id, true);
      await pipelines.delete(req.id);
      return {};
    }),
    listDataPipelineRuns: unary(async (req, md) => {
      await owned(md, req.id);
      const runs = await pipelines.runs(req.id);
      return {
        pipelineId: req.id,
        runs: runs.map((r) => ({
          id: r.id,
          startTime: r.startTime,
          endTime: r.endTime,
          dataStartTime: r.dataStart,
          dataEndTime: r.dataEnd,
          documents: r.documents,
          status: r.status === 'COMPLETED' ? DataPipelineRunStatus.DATA_PIPELINE_RUN_STATUS_COMPLETED : DataPipelineRunStatus.DATA_PIPELINE_RUN_STATUS_FAILED,
          errorMessage: r.errorMessage,
        })),
      };
    }),
  };
  server.addService(DataPipelinesServiceService, impl);
}
