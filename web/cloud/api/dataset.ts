// platform.app.dataset.v1.DatasetService: datasets of the data views.
import * as dataset from '../../../gen/platform/app/dataset/v1/dataset.js';
import { method } from './client.js';

const DATASET = 'platform.app.dataset.v1.DatasetService';
export const datasetApi = {
  create: method(DATASET, 'CreateDataset', dataset.CreateDatasetRequest, dataset.CreateDatasetResponse),
  rename: method(DATASET, 'RenameDataset', dataset.RenameDatasetRequest, dataset.RenameDatasetResponse),
  remove: method(DATASET, 'DeleteDataset', dataset.DeleteDatasetRequest, dataset.DeleteDatasetResponse),
  listByOrganization: method(
    DATASET,
    'ListDatasetsByOrganizationID',
    dataset.ListDatasetsByOrganizationIDRequest,
    dataset.ListDatasetsByOrganizationIDResponse,
  ),
  addBinaryData: method(DATASET, 'AddBinaryDataToDatasetByIDs', dataset.AddBinaryDataToDatasetByIDsRequest, dataset.AddBinaryDataToDatasetByIDsResponse),
  removeBinaryData: method(
    DATASET,
    'RemoveBinaryDataFromDatasetByIDs',
    dataset.RemoveBinaryDataFromDatasetByIDsRequest,
    dataset.RemoveBinaryDataFromDatasetByIDsResponse,
  ),
  createVersion: method(DATASET, 'CreateDatasetVersion', dataset.CreateDatasetVersionRequest, dataset.CreateDatasetVersionResponse),
  listVersions: method(DATASET, 'ListDatasetVersions', dataset.ListDatasetVersionsRequest, dataset.ListDatasetVersionsResponse),
  /** Server stream: the chunks of one zip. */
  exportDataset: method(DATASET, 'ExportDataset', dataset.ExportDatasetRequest, dataset.ExportDatasetResponse),
};
