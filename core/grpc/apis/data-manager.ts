import * as pb from '../../../gen/platform/service/datamanager/v1/data_manager.js';
import { requireName, type ApiAdapter } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';
import { defineApi } from '../../../plugins/api.js';

// The api name is repeated here rather than imported: the gRPC layer knows only proxies, not core/datamanager.
const DATA_MANAGER_API = defineApi<DataManager>('core:service:data_manager');

interface DataManager {
  doCommand(command: Record<string, unknown>): Record<string, unknown>;
}

export const dataManagerAdapter: ApiAdapter = {
  serviceName: 'platform.service.datamanager.v1.DataManagerService',
  definition: pb.DataManagerServiceService,
  implementation: (access): pb.DataManagerServiceServer => ({
    sync: unary<pb.SyncRequest, pb.SyncResponse>(async (r) => {
      await access.resource(requireName(r.name), DATA_MANAGER_API).doCommand({ sync: {} });
      return {};
    }),
    doCommand: doCommand(access, DATA_MANAGER_API),
  }),
};
