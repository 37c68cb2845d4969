import type { DoCommandRequest, DoCommandResponse } from '../../../gen/platform/robot/v1/common.js';
import type { ResourceAccess } from '../api-adapter.js';
import { requireName } from '../api-adapter.js';
import { unary } from '../unary.js';
import { defineApi } from '../../../plugins/api.js';

interface Commandable {
  doCommand(command: Record<string, unknown>): Record<string, unknown>;
}

/** DoCommand, which every resource api offers. */
export function doCommand(access: ResourceAccess, api: string) {
  return unary<DoCommandRequest, DoCommandResponse>(async (request) => {
    const result = await access.resource(requireName(request.name), defineApi<Commandable>(api)).doCommand(request.command ?? {});
    return { result: result ?? {} };
  });
}
