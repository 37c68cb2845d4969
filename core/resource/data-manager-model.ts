// The data manager (`core:service:data_manager`, model `builtin`): captures resource data to files and
// syncs them to the cloud. Its driver runs in its own worker like any resource's, and reaches the captured
// resources' workers through the ordinary dependency channels, so capture never runs on the main thread.
import { defineModel } from '../../plugins/contract.js';
import { DATA_MANAGER_API, DATA_MANAGER_MODEL, dataManagerAttributes } from '../config/data-manager-attributes.js';

export const dataManagerModel = defineModel({
  api: DATA_MANAGER_API,
  model: DATA_MANAGER_MODEL,
  attributes: dataManagerAttributes,
  driver: new URL('../datamanager/driver.js', import.meta.url),
  description: 'Captures the data of resources (their service_configs) to local files and syncs them to the cloud.',
});
