// platform.app.data.v1.DataService: the calls of the data views.
import * as data from '../../../gen/platform/app/data/v1/data.js';
import { method } from './client.js';

const DATA = 'platform.app.data.v1.DataService';
export const dataApi = {
  binaryDataByFilter: method(DATA, 'BinaryDataByFilter', data.BinaryDataByFilterRequest, data.BinaryDataByFilterResponse),
  binaryDataByIds: method(DATA, 'BinaryDataByIDs', data.BinaryDataByIDsRequest, data.BinaryDataByIDsResponse),
  deleteBinaryDataByIds: method(DATA, 'DeleteBinaryDataByIDs', data.DeleteBinaryDataByIDsRequest, data.DeleteBinaryDataByIDsResponse),
  addTagsByIds: method(DATA, 'AddTagsToBinaryDataByIDs', data.AddTagsToBinaryDataByIDsRequest, data.AddTagsToBinaryDataByIDsResponse),
  removeTagsByIds: method(DATA, 'RemoveTagsFromBinaryDataByIDs', data.RemoveTagsFromBinaryDataByIDsRequest, data.RemoveTagsFromBinaryDataByIDsResponse),
  tagsByFilter: method(DATA, 'TagsByFilter', data.TagsByFilterRequest, data.TagsByFilterResponse),
  addBoundingBox: method(DATA, 'AddBoundingBoxToImageByID', data.AddBoundingBoxToImageByIDRequest, data.AddBoundingBoxToImageByIDResponse),
  removeBoundingBox: method(DATA, 'RemoveBoundingBoxFromImageByID', data.RemoveBoundingBoxFromImageByIDRequest, data.RemoveBoundingBoxFromImageByIDResponse),
  boundingBoxLabelsByFilter: method(DATA, 'BoundingBoxLabelsByFilter', data.BoundingBoxLabelsByFilterRequest, data.BoundingBoxLabelsByFilterResponse),
  /** Server stream: the chunks of one MCAP file. */
  exportMcap: method(DATA, 'ExportMcap', data.ExportMcapRequest, data.ExportMcapResponse),
};
