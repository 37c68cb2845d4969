// platform.app.v1.AppService: a part's machine config, its revisions, and its logs, for users.
import type { Metadata, Server } from '@grpc/grpc-js';
import {
  AppServiceService,
  type GetRobotPartHistoryRequest,
  type GetRobotPartLogsRequest,
  type GetRobotPartRequest,
  type ListLocationsRequest,
  type ListMachinesRequest,
  type LogEntry,
  type RobotPart,
  type TailRobotPartLogsRequest,
  type TailRobotPartLogsResponse,
  type UpdateRobotPartRequest,
} from '../../gen/platform/app/v1/robot_part.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal } from '../auth/principal.js';
import { serverStream, unary } from '../kit/handlers.js';
import type { TabularStore } from '../store/tabular.js';
import { latestPartConfig, partConfigHistory, savePartConfig, type PartRow } from './part-configs.js';
import { authorizeUser } from './part-access.js';
import { checkLevels, type PartLogs, type StoredLogEntry } from './part-logs.js';
import { listLocations, listMachines, listOrganizations } from './places.js';
import type { PartStatusBook } from './part-status.js';
import { BoundedSender, maxQueuedBytesFromEnv } from './stream-sender.js';
import { TailSlots } from './tail-slots.js';

export const logEntryOut = (e: StoredLogEntry): LogEntry => ({ time: e.time, level: e.level, loggerName: e.loggerName, message: e.message, fields: e.fields });

/** About what an entry costs while it waits: its strings (UTF-16, two bytes a character) and fields as JSON. */
function logEntryBytes(e: LogEntry): number {
  return 64 + 2 * (e.message.length + e.loggerName.length + e.level.length + JSON.stringify(e.fields ?? {}).length);
}

// Every tail of a part is handed the same entry objects: each entry's size is worked out once, not once
// per tail (40 tails of one part spent 237 ms of the thread on one 10,000-entry batch).
const entrySizes = new WeakMap<LogEntry, number>();
function sharedEntryBytes(e: LogEntry): number {
  let bytes = entrySizes.get(e);
  if (bytes === undefined) entrySizes.set(e, (bytes = logEntryBytes(e)));
  return bytes;
}

export async function robotPartOf(store: TabularStore, status: PartStatusBook, part: PartRow): Promise<RobotPart> {
  const latest = await latestPartConfig(store, part.id);
  const s = status.get(part.id);
  return {
    id: part.id,
    name: part.name,
    machineId: part.machineId,
    locationId: part.locationId,
    robotConfig: latest?.config ?? {},
    configRevision: latest?.revision ?? 0,
    lastAccess: s.lastAccess,
    online: s.online,
    runtimeVersion: s.report?.runtimeVersion ?? '',
    lastStatus: s.report,
  };
}

export function addAppService(server: Server, store: TabularStore, authorizer: Authorizer, logs: PartLogs, status: PartStatusBook): void {
  const maxQueuedBytes = maxQueuedBytesFromEnv();
  const tails = new TailSlots();
  server.addService(AppServiceService, {
    getRobotPart: unary(async (req: GetRobotPartRequest, md: Metadata) => {
      const { part } = await authorizeUser(store, authorizer, md, req.id);
      return { part: await robotPartOf(store, status, part) };
    }),
    updateRobotPart: unary(async (req: UpdateRobotPartRequest, md: Metadata) => {
      const { part, principal } = await authorizeUser(store, authorizer, md, req.id, 'owner');
      await savePartConfig(store, part.id, req.robotConfig, describePrincipal(principal));
      return { part: await robotPartOf(store, status, part) };
    }),
    getRobotPartHistory: unary(async (req: GetRobotPartHistoryRequest, md: Metadata) => {
      const { part } = await authorizeUser(store, authorizer, md, req.id);
      const history = await partConfigHistory(store, part.id);
      return { history: history.map((h) => ({ revision: h.revision, time: h.time, savedBy: h.savedBy, robotConfig: h.config })) };
    }),
    getRobotPartLogs: unary(async (req: GetRobotPartLogsRequest, md: Metadata) => {
      const { part } = await authorizeUser(store, authorizer, md, req.id);
      const page = await logs.query(part.id, {
        levels: req.levels,
        start: req.start,
        end: req.end,
        filter: req.filter,
        pageToken: req.pageToken,
        limit: req.limit,
      });
      return { logs: page.logs.map(logEntryOut), nextPageToken: page.nextPageToken };
    }),
    listOrganizations: unary(async (_req: unknown, md: Metadata) => ({ organizations: await listOrganizations(store, authorizer, md) })),
    listLocations: unary(async (req: ListLocationsRequest, md: Metadata) => ({
      locations: await listLocations(store, authorizer, md, req.organizationId),
    })),
    listMachines: unary(async (req: ListMachinesRequest, md: Metadata) => ({
      machines: await listMachines(store, authorizer, status, md, req.organizationId, req.locationId),
    })),
    tailRobotPartLogs: serverStream<TailRobotPartLogsRequest, TailRobotPartLogsResponse>(async (call) => {
      const { part, principal } = await authorizeUser(store, authorizer, call.metadata, call.request.id);
      const levels = checkLevels(call.request.levels);
      const release = tails.take(principal);
      let unfollow: (() => void) | undefined;
      let ended = false;
      await new Promise<void>((resolve, reject) => {
        // Entries wait here while the client does not read; past the limit the tail is closed (stream-sender.ts).
        const sender = new BoundedSender<LogEntry, TailRobotPartLogsResponse>(
          call,
          (logs) => ({ logs }),
          sharedEntryBytes,
          maxQueuedBytes,
          (err) => finish(err),
          `TailRobotPartLogs of part ${part.id}`,
        );
        const onLogs = (entries: StoredLogEntry[]) => {
          const wanted = levels.length ? entries.filter((e) => levels.includes(e.level)) : entries;
          // Stored entries are LogEntry messages already (log-entry.ts): sent as they are, never copied per tail.
          if (wanted.length) sender.push(wanted);
        };
        const finish = (err?: Error) => {
          if (ended) return;
          ended = true;
          release();
          unfollow?.();
          sender.stop();
          if (err) reject(err);
          else resolve();
        };
        call.once('cancelled', () => finish());
        // Following may take a read (PostgreSQL); a tail cancelled meanwhile stops it as soon as it starts.
        logs.follow(part.id, onLogs).then(
          (stop) => {
            unfollow = stop;
            if (ended) stop();
          },
          (err: Error) => finish(err),
        );
      });
    }),
  });
}
