// platform.app.datasync.v1.DataSyncService: the data browser's image upload. The page uploads each file
// with the unary DataCaptureUpload (a browser's fetch cannot send a gRPC client stream).
import * as sync from '../../../gen/platform/app/datasync/v1/data_sync.js';
import { method } from './client.js';

const SYNC = 'platform.app.datasync.v1.DataSyncService';
export const dataSyncApi = {
  dataCaptureUpload: method(SYNC, 'DataCaptureUpload', sync.DataCaptureUploadRequest, sync.DataCaptureUploadResponse),
};
export const FILE_TYPE = sync.DataType.DATA_TYPE_FILE;
