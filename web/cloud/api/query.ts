// platform.app.data.v1.DataService: the calls of the query consoles and the tabular view.
import * as data from '../../../gen/platform/app/data/v1/data.js';
import { method } from './client.js';

const DATA = 'platform.app.data.v1.DataService';
export const queryApi = {
  tabularDataBySql: method(DATA, 'TabularDataBySQL', data.TabularDataBySQLRequest, data.TabularDataBySQLResponse),
  tabularDataByMql: method(DATA, 'TabularDataByMQL', data.TabularDataByMQLRequest, data.TabularDataByMQLResponse),
  tabularDataByFilter: method(DATA, 'TabularDataByFilter', data.TabularDataByFilterRequest, data.TabularDataByFilterResponse),
};
