// platform.app.v1.RobotService: the machine API. platform-server fetches its part's config, follows
// new revisions, uploads its log lines and reports its status here.
import { Metadata as GrpcMetadata, type Metadata, type Server } from '@grpc/grpc-js';
import {
  RobotServiceService,
  type LogRequest,
  type ConfigRequest,
  type ConfigResponse,
  type ReportStatusRequest,
  type WatchConfigRequest,
} from '../../gen/platform/app/v1/robot_part.js';
import { invalidArgument } from '../../core/serving/status-error.js';
import { LEVEL_NAMES } from '../../core/config/log-levels.js';
import type { Authorizer } from '../auth/authorizer.js';
import { serverStream, unary } from '../kit/handlers.js';
import type { TabularStore } from '../store/tabular.js';
import { LogRate } from './log-rate.js';
import { decodeLogRequest } from './log-request.js';
import { latestPartConfig } from './part-configs.js';
import { authorizeMachine } from './part-access.js';
import { partEvents } from './part-events.js';
import type { PartLogs, StoredLogEntry } from './part-logs.js';
import type { PartStatusBook } from './part-status.js';

/** At most this many entries per upload, so that one call stays a bounded amount of work. */
export const MAX_LOG_BATCH = 10_000;

async function configOf(store: TabularStore, part: { id: string; name: string }): Promise<ConfigResponse> {
  const latest = await latestPartConfig(store, part.id);
  return { config: latest?.config ?? {}, revision: latest?.revision ?? 0, time: latest?.time, partName: part.name };
}

const LEVELS: readonly string[] = LEVEL_NAMES;

/** A request grpc-js hands on undecoded. */
interface RawRequest {
  bytes: Buffer;
}

export function addRobotService(
  server: Server,
  store: TabularStore,
  authorizer: Authorizer,
  logs: PartLogs,
  status: PartStatusBook,
  rate: LogRate = new LogRate(),
): void {
  const machine = async (md: Metadata, partId: string, access: 'read' | 'write' = 'read') => {
    const { part, speaksForPart } = await authorizeMachine(store, authorizer, md, partId, access);
    // Only the machine's own calls say it is online; a user reading its config does not.
    if (speaksForPart) status.touch(part.id);
    return part;
  };
  const definition = {
    ...RobotServiceService,
    log: { ...RobotServiceService.log, requestDeserialize: (bytes: Buffer): RawRequest => ({ bytes }) },
  };
  server.addService(definition, {
    config: unary(async (req: ConfigRequest, md: Metadata) => configOf(store, await machine(md, req.id))),
    watchConfig: serverStream<WatchConfigRequest, ConfigResponse>(async (call) => {
      const part = await machine(call.metadata, call.request.id);
      // Headers now: the machine learns that its stream is accepted before any revision arrives.
      call.sendMetadata(new GrpcMetadata());
      let sent = call.request.knownRevision;
      let ended = false;
      let pumping = false;
      let again = false;
      // Revisions are read from the table, never from the event, so that a burst of saves ends with
      // the newest one sent and none sent twice. While the machine does not read (write() returned
      // false), saves only mark the stream dirty: after 'drain' the newest revision goes, once, so a
      // machine that stops reading holds one config in the cloud's memory, not one per save.
      const drained = () =>
        new Promise<void>((resolve) => {
          const done = () => {
            call.off('drain', done);
            call.off('cancelled', done);
            resolve();
          };
          call.on('drain', done);
          call.on('cancelled', done);
        });
      const sendNewer = async () => {
        again = true;
        if (pumping) return;
        pumping = true;
        try {
          while (again && !ended) {
            again = false;
            const current = await configOf(store, part);
            if (current.revision > sent && !ended) {
              sent = current.revision;
              if (!call.write(current)) await drained();
            }
          }
        } catch {
          // A failed read: the next save (or the machine's reconnect) tries again.
        } finally {
          pumping = false;
        }
      };
      const events = partEvents(store);
      const onConfig = (partId: string) => {
        if (partId === part.id) void sendNewer();
      };
      events.on('config', onConfig);
      void sendNewer();
      await new Promise<void>((resolve) => {
        call.once('cancelled', () => {
          ended = true;
          events.off('config', onConfig);
          resolve();
        });
      });
    }),
    // Log's bytes reach the handler undecoded: they are charged to the writer's rate (log-rate.ts) first,
    // so a request over it is refused without the cost of decoding it.
    log: unary(async (raw: RawRequest, md: Metadata) => {
      rate.charge(await authorizer.authenticate(md), raw.bytes.byteLength);
      let req: LogRequest;
      try {
        req = await decodeLogRequest(raw.bytes);
      } catch (err) {
        throw invalidArgument(`request: cannot be decoded (${(err as Error).message})`);
      }
      const part = await machine(md, req.id, 'write');
      if (req.logs.length > MAX_LOG_BATCH) throw invalidArgument(`logs: at most ${MAX_LOG_BATCH} entries per call, got ${req.logs.length}`);
      const entries: StoredLogEntry[] = req.logs.map((e, i) => {
        if (!e.time) throw invalidArgument(`logs[${i}].time is required`);
        const level = e.level.toLowerCase();
        if (!LEVELS.includes(level)) throw invalidArgument(`logs[${i}].level "${e.level}": must be one of ${LEVEL_NAMES.join(', ')}`);
        return { time: e.time, level, loggerName: e.loggerName, message: e.message, fields: e.fields ?? {} };
      });
      await logs.append(part.id, entries, part.organizationId);
      return {};
    }),
    reportStatus: unary(async (req: ReportStatusRequest, md: Metadata) => {
      const part = await machine(md, req.id, 'write');
      await status.report(part.id, req);
      return {};
    }),
  });
}
