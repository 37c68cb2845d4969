// platform.robot.v1.RobotService: the machine as a whole.
import { status, type ServerWritableStream } from '@grpc/grpc-js';
import * as pb from '../../../gen/platform/robot/v1/robot.js';
import type { ResourceState as KernelState } from '../../kernel/resource-node.js';
import type { LogRing, RingLine } from '../../logging/log-ring.js';
import { isLevelName, LEVEL_NAMES } from '../../config/log-levels.js';
import { actuationOf } from '../../session/actuators.js';
import type { Sessions } from '../../session/sessions.js';
import { StatusError } from '../../serving/status-error.js';
import type { ResourceAccess } from '../api-adapter.js';
import { toStatusError, unary } from '../unary.js';
import { defineApi } from '../../../plugins/api.js';

const STATES: Record<KernelState, pb.ResourceState> = {
  unconfigured: pb.ResourceState.RESOURCE_STATE_UNCONFIGURED,
  configuring: pb.ResourceState.RESOURCE_STATE_CONFIGURING,
  ready: pb.ResourceState.RESOURCE_STATE_READY,
  removing: pb.ResourceState.RESOURCE_STATE_REMOVING,
  unhealthy: pb.ResourceState.RESOURCE_STATE_UNHEALTHY,
};

const MACHINE_STATES = {
  initializing: pb.MachineState.MACHINE_STATE_INITIALIZING,
  running: pb.MachineState.MACHINE_STATE_RUNNING,
  stopping: pb.MachineState.MACHINE_STATE_STOPPING,
  stopped: pb.MachineState.MACHINE_STATE_STOPPING,
} as const;

export interface RobotFacts {
  version: string;
  machineState(): keyof typeof MACHINE_STATES;
  /** The error of the last config that was rejected while the previous one kept running. */
  configError(): string | undefined;
  /** Starts an orderly shutdown; the process exits 0 once every resource is closed. */
  shutdown(): void;
  sessions: Sessions;
  /** A saved, valid config that waits for the maintenance window. */
  pendingConfig(): { revision: number; reason: string; since: Date } | undefined;
  /** The recent and new log lines (StreamLogs). */
  logs: LogRing;
  config: {
    /** The running config, its origin, and the errors of a rejected newer one (GetConfig). */
    view(): pb.GetConfigResponse;
    /** Validates and durably saves a new config (SaveConfig); throws FAILED_PRECONDITION when it cannot be saved here. */
    save(configJson: string): Promise<pb.SaveConfigResponse>;
  };
}

/** How many backlog lines one StreamLogs call may ask for (the ring holds at most this many anyway). */
const MAX_BACKLOG = 10_000;

/** A line's fields as a protobuf Struct can carry them (plain JSON: no Errors, bigints or cycles). */
function jsonFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!fields) return {};
  try {
    return JSON.parse(JSON.stringify(fields, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Error ? v.message : v))) as Record<
      string,
      unknown
    >;
  } catch {
    return { unprintable: true };
  }
}

const toLine = (l: RingLine): pb.LogLine => ({
  time: new Date(l.time),
  level: l.level,
  loggerName: l.logger,
  message: l.message,
  fields: jsonFields(l.fields),
});

/** Ends a streaming call with INVALID_ARGUMENT. */
function refuse(call: ServerWritableStream<unknown, unknown>, details: string): void {
  call.emit('error', { code: status.INVALID_ARGUMENT, details });
}

/** StreamLogs: the backlog, then every new line, until the caller cancels or the runtime stops. */
function streamLogs(logs: LogRing, call: ServerWritableStream<pb.StreamLogsRequest, pb.StreamLogsResponse>): void {
  const { minLevel = '', backlog = 0 } = call.request;
  const level = minLevel || 'debug';
  if (!isLevelName(level)) {
    refuse(call, `min_level: must be one of ${LEVEL_NAMES.join(', ')} (or empty for debug), got ${JSON.stringify(minLevel)}`);
    return;
  }
  if (backlog > MAX_BACKLOG) {
    refuse(call, `backlog: must be at most ${MAX_BACKLOG}, got ${backlog}`);
    return;
  }
  const recent = logs.recent(level, backlog);
  if (recent.length) call.write({ lines: recent.map(toLine) });
  const subscription = logs.subscribe(
    level,
    (lines, dropped) => {
      const out = lines.map(toLine);
      // Said in the stream itself, so a reader knows the view has a gap.
      if (dropped)
        out.unshift({
          time: new Date(),
          level: 'warn',
          loggerName: 'platform.server',
          message: `${dropped} log lines were not sent: this stream fell behind`,
          fields: { dropped },
        });
      call.write({ lines: out });
    },
    () => call.end(),
  );
  call.on('cancelled', () => subscription.close());
  call.on('close', () => subscription.close());
}

/** Stops every ready actuator at once; fails afterwards, naming each resource that could not be stopped. */
async function stopAll(access: ResourceAccess): Promise<void> {
  const actuators = access.statuses().filter((s) => s.key === s.name && s.state === 'ready' && actuationOf(s.api));
  const failures: string[] = [];
  await Promise.all(
    actuators.map(async ({ name, api }) => {
      try {
        const remote = access.resource(name, defineApi<Record<string, () => Promise<void>>>(api));
        await remote[actuationOf(api)!.stop]();
      } catch (err) {
        failures.push(`${name}: ${toStatusError(err).message}`);
      }
    }),
  );
  if (failures.length)
    throw new StatusError(status.INTERNAL, `StopAll could not stop ${failures.length} of ${actuators.length} actuators: ${failures.sort().join('; ')}`);
}

function resourceName(api: string, name: string): pb.ResourceNamesResponse['resources'][number] {
  const [namespace = '', type = '', subtype = ''] = api.split(':');
  return { namespace, type, subtype, name };
}

export function robotService(access: ResourceAccess, facts: RobotFacts): pb.RobotServiceServer {
  return {
    resourceNames: unary<pb.ResourceNamesRequest, pb.ResourceNamesResponse>(() => ({
      resources: access
        .statuses()
        .filter((s) => s.key === s.name)
        .map((s) => resourceName(s.api, s.name)),
    })),
    getMachineStatus: unary<pb.GetMachineStatusRequest, pb.GetMachineStatusResponse>(() => ({
      state: MACHINE_STATES[facts.machineState()],
      configError: facts.configError() ?? '',
      pendingConfig: facts.pendingConfig(),
      resources: access.statuses().map((s) => ({
        name: resourceName(s.api, s.name),
        state: STATES[s.state],
        error: s.error ?? '',
        lastUpdated: s.lastUpdated,
        model: s.model,
        revision: s.revision,
      })),
    })),
    shutdown: unary<pb.ShutdownRequest, pb.ShutdownResponse>(() => {
      // Answer first; the shutdown closes this very server.
      setImmediate(() => facts.shutdown());
      return {};
    }),
    startSession: unary<pb.StartSessionRequest, pb.StartSessionResponse>((r) => {
      const { id, windowMs } = facts.sessions.start(r.resume || undefined);
      return { id, heartbeatWindow: { seconds: Math.floor(windowMs / 1000), nanos: (windowMs % 1000) * 1_000_000 } };
    }),
    sendSessionHeartbeat: unary<pb.SendSessionHeartbeatRequest, pb.SendSessionHeartbeatResponse>((r) => {
      facts.sessions.touch(r.id, 'id');
      return {};
    }),
    stopAll: unary<pb.StopAllRequest, pb.StopAllResponse>(async () => {
      await stopAll(access);
      return {};
    }),
    streamLogs: (call) => streamLogs(facts.logs, call),
    getConfig: unary<pb.GetConfigRequest, pb.GetConfigResponse>(() => facts.config.view()),
    saveConfig: unary<pb.SaveConfigRequest, pb.SaveConfigResponse>((r) => facts.config.save(r.configJson)),
    getVersion: unary<pb.GetVersionRequest, pb.GetVersionResponse>(() => ({ platform: 'platform-server', version: facts.version, apiVersion: 'v1' })),
  };
}
