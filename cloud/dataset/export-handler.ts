// DatasetService.ExportDataset: a version (or the live dataset, version 0) as one zip in the chosen
// format, streamed as chunks of `data` with the call's flow control (an image is read only when the
// client has taken what came before).
import type { ServerWritableStream } from '@grpc/grpc-js';
import { invalidArgument } from '../../core/serving/status-error.js';
import { DatasetFormat, type ExportDatasetRequest, type ExportDatasetResponse } from '../../gen/platform/app/dataset/v1/dataset.js';
import { writeMessage } from '../kit/stream-write.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { exportFiles, type ExportFormat } from './export-formats.js';
import { zipExport } from './export-zip.js';
import { liveMembers } from './members.js';
import { defaultSplit } from './split.js';
import { checkVersionNumber, type VersionOperations } from './version-handlers.js';

const formats: Partial<Record<DatasetFormat, ExportFormat>> = {
  [DatasetFormat.DATASET_FORMAT_JSONL]: 'jsonl',
  [DatasetFormat.DATASET_FORMAT_COCO]: 'coco',
  [DatasetFormat.DATASET_FORMAT_YOLO]: 'yolo',
};

export function exportFormatOf(format: DatasetFormat): ExportFormat {
  const name = formats[format];
  if (!name) throw invalidArgument(`format must be DATASET_FORMAT_JSONL, DATASET_FORMAT_COCO or DATASET_FORMAT_YOLO, got ${format}`);
  return name;
}

export async function exportDataset(
  ops: VersionOperations,
  store: StoreWithBlobs,
  call: ServerWritableStream<ExportDatasetRequest, ExportDatasetResponse>,
): Promise<void> {
  const { datasetId, version, format } = call.request;
  const name = exportFormatOf(format);
  const number = checkVersionNumber(version, true);
  let members;
  let ctx;
  if (number === 0) {
    const dataset = await ops.readable(call.metadata, datasetId);
    members = await liveMembers(store, dataset.organizationId, datasetId, defaultSplit);
    await ops.checkScope(
      dataset.principal,
      members.map((m) => m.partId),
      `dataset ${datasetId}`,
    );
    ctx = { datasetId, organizationId: dataset.organizationId, version: 0, created: new Date() };
  } else {
    members = await ops.readMembers(call.metadata, datasetId, number);
    const frozen = await ops.versions.get(datasetId, number);
    ctx = { datasetId, organizationId: frozen.organizationId, version: number, created: frozen.timeCreated! };
  }
  const files = exportFiles(name, members, ctx);
  for await (const chunk of zipExport(files, store.blobs)) await writeMessage(call, { data: chunk });
}
