// platform.app.agent.v1.AgentDeviceService: a machine's agent reports its versions and gets its saved
// agent config, its maintenance window, and the binary (URL + sha256) to run for each subsystem.
import type { Server, Metadata } from '@grpc/grpc-js';
import {
  AgentDeviceServiceService,
  type DeviceAgentConfigRequest,
  type DeviceAgentConfigResponse,
  type UpdateInfo,
} from '../../gen/platform/app/agent/v1/agent.js';
import { invalidArgument, notFound, permissionDenied } from '../../core/serving/status-error.js';
import { parseAgentConfig } from '../../core/config/agent-config.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal } from '../auth/principal.js';
import type { TabularStore } from '../store/tabular.js';
import { unary } from '../kit/handlers.js';
import { AGENT_SUBSYSTEMS, ReleaseResolutionError, resolveRelease } from './releases.js';
import { getPartAgentConfig } from './machine-agent-config.js';
import { VersionSpecError } from '../../core/config/version-spec.js';

/** How often agents check in: the agent's default, so that one cloud can slow every agent down later. */
export const CHECK_INTERVAL_SECONDS = 300;

export async function deviceAgentConfig(
  store: TabularStore,
  authorizer: Authorizer,
  req: DeviceAgentConfigRequest,
  md: Metadata,
): Promise<DeviceAgentConfigResponse> {
  if (!req.partId) throw invalidArgument('part_id is required');
  const platform = req.hostInfo?.platform;
  if (!platform) throw invalidArgument('host_info.platform is required (e.g. linux/amd64)');
  const principal = await authorizer.authenticate(md);
  const parts = await store.query('SELECT machine_id, location_id, organization_id FROM machine_parts WHERE id = ?', [req.partId]);
  if (parts.length === 0) throw notFound(`machine part ${req.partId} does not exist`);
  const part = parts[0];
  if (principal.kind === 'part') {
    if (principal.partId !== req.partId) throw permissionDenied(`${describePrincipal(principal)} may not read the config of part ${req.partId}`);
  } else {
    authorizer.check(principal, { organizationId: String(part.organization_id), locationId: String(part.location_id), machineId: String(part.machine_id) });
  }
  const saved = await getPartAgentConfig(store, req.partId);
  const savedVersions = parseAgentConfig(saved.agent).version_control;
  const updateInfo: Record<string, UpdateInfo> = {};
  const errors: Record<string, string> = {};
  for (const subsystem of AGENT_SUBSYSTEMS) {
    const spec = req.requested[subsystem] || savedVersions[subsystem];
    try {
      const release = await resolveRelease(store, subsystem, spec, platform);
      updateInfo[subsystem] = { version: release.version, url: release.url, sha256: release.sha256 };
    } catch (err) {
      if (err instanceof ReleaseResolutionError || err instanceof VersionSpecError) errors[subsystem] = err.message;
      else throw err;
    }
  }
  return { agentConfig: saved.agent, maintenance: saved.maintenance, updateInfo, errors, checkIntervalSeconds: CHECK_INTERVAL_SECONDS };
}

export function addAgentService(server: Server, store: TabularStore, authorizer: Authorizer): void {
  server.addService(AgentDeviceServiceService, {
    deviceAgentConfig: unary((req: DeviceAgentConfigRequest, md) => deviceAgentConfig(store, authorizer, req, md)),
  });
}
