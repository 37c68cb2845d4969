// platform.app.v1.AppService: organizations, locations, machines and parts; a part's config and logs.
import * as app from '../../../gen/platform/app/v1/robot_part.js';
import { method } from './client.js';

const APP = 'platform.app.v1.AppService';
export const appApi = {
  listOrganizations: method(APP, 'ListOrganizations', app.ListOrganizationsRequest, app.ListOrganizationsResponse),
  listLocations: method(APP, 'ListLocations', app.ListLocationsRequest, app.ListLocationsResponse),
  listMachines: method(APP, 'ListMachines', app.ListMachinesRequest, app.ListMachinesResponse),
  getRobotPart: method(APP, 'GetRobotPart', app.GetRobotPartRequest, app.GetRobotPartResponse),
  updateRobotPart: method(APP, 'UpdateRobotPart', app.UpdateRobotPartRequest, app.UpdateRobotPartResponse),
  history: method(APP, 'GetRobotPartHistory', app.GetRobotPartHistoryRequest, app.GetRobotPartHistoryResponse),
  logs: method(APP, 'GetRobotPartLogs', app.GetRobotPartLogsRequest, app.GetRobotPartLogsResponse),
  /** Server-streaming: call it with serverStream (stream.ts). */
  tailLogs: method(APP, 'TailRobotPartLogs', app.TailRobotPartLogsRequest, app.TailRobotPartLogsResponse),
};
