// platform-server's own metrics: driver call latency per resource (timed on the main thread, around the
// call into the driver's worker), live sessions, the log queue, and the data manager's capture and sync
// figures. The data manager runs in its own worker, so its figures are read at scrape time through its
// DoCommand {"status": {}} (the same numbers GetMachineStatus' callers see), not kept twice.
import type { Context } from '@opentelemetry/api';
import { defineApi, type Api } from '../../plugins/api.js';
import type { Remote } from '../../plugins/contract.js';
import { DATA_MANAGER_API } from '../config/data-manager-attributes.js';
import { histogram, Observed, secondsSince, type Labels } from '../serving/telemetry/metrics.js';
import { activeTracing, childSpan, endSpan } from '../serving/telemetry/tracing.js';

const driverCalls = histogram('platform_driver_call_seconds', "Time of a call into a resource's driver worker, by resource, method and outcome", [
  'resource',
  'method',
  'outcome',
]);

/** A driver call's span name and attributes, made once per resource and method (the hot path allocates neither). */
const driverSpans = new Map<string, Map<string, { name: string; attributes: Readonly<Record<string, string>> }>>();

function driverSpanOf(resource: string, method: string) {
  let methods = driverSpans.get(resource);
  if (!methods) {
    methods = new Map();
    if (driverSpans.size < 10_000) driverSpans.set(resource, methods); // resources come from the config: few
  }
  let named = methods.get(method);
  if (!named) {
    named = { name: `driver ${resource}.${method}`, attributes: Object.freeze({ 'platform.resource': resource, 'platform.method': method }) };
    methods.set(method, named);
  }
  return named;
}

/**
 * Times one driver call (and traces it, when tracing is on: a child of `trace`, the gRPC call's span
 * context, given explicitly; a root span without one); the promise is passed through unchanged. The call
 * runs in the driver's worker, so its span is not made active here.
 */
export function timeDriverCall<T>(resource: string, method: string, call: () => Promise<T>, trace?: Context): Promise<T> {
  const started = process.hrtime.bigint();
  let span: ReturnType<typeof childSpan>;
  if (activeTracing()) {
    const named = driverSpanOf(resource, method);
    span = childSpan(named.name, named.attributes, trace);
  }
  let calling: Promise<T>;
  try {
    calling = call();
  } catch (err) {
    calling = Promise.reject(err as Error);
  }
  return calling.then(
    (value) => {
      driverCalls.observe({ resource, method, outcome: 'ok' }, secondsSince(started));
      if (span) endSpan(span);
      return value;
    },
    (err: unknown) => {
      driverCalls.observe({ resource, method, outcome: 'error' }, secondsSince(started));
      if (span) endSpan(span, err);
      throw err;
    },
  );
}

export const sessionsActive = new Observed('platform_sessions_active', 'Live client sessions (heartbeats not yet expired)');
export const logQueueLines = new Observed('platform_log_queue_lines', 'Log lines queued on the machine for the cloud, written to disk or not');

const captureRecords = new Observed(
  'platform_capture_records_total',
  'Readings captured to disk, by data manager and capture method',
  ['data_manager', 'method'],
  'counter',
);
const captureErrors = new Observed(
  'platform_capture_errors_total',
  'Capture calls that failed, by data manager and capture method',
  ['data_manager', 'method'],
  'counter',
);
const syncFiles = new Observed('platform_sync_backlog_files', 'Closed capture (and additional sync path) files waiting to be uploaded', ['data_manager']);
const syncBytes = new Observed('platform_sync_backlog_bytes', 'Bytes of the files waiting to be uploaded', ['data_manager']);
const syncUploaded = new Observed(
  'platform_sync_uploaded_files_total',
  'Files uploaded to the cloud since the data manager started',
  ['data_manager'],
  'counter',
);

interface DataManagerStatus {
  files_waiting?: number;
  bytes_waiting?: number;
  uploaded_files?: number;
  capture?: Record<string, { records?: number; errors?: number }>;
}

/** What is read of the kernel's Machine (structural, so that the runtime and online
 * code read the same view of the kernel's Machine). */
interface MachineView {
  statuses(): readonly { name: string; api: string; state: string }[];
  resource<T>(name: string, api: Api<T>): Remote<T>;
}

/** Reads every ready data manager's status once per scrape (all five metrics share the reads). */
function dataManagerReader(machine: MachineView): () => Promise<[string, DataManagerStatus][]> {
  let last: { at: number; reading: Promise<[string, DataManagerStatus][]> } | undefined;
  const read = async () => {
    const managers = machine.statuses().filter((s) => s.api === DATA_MANAGER_API && s.state === 'ready');
    const results = await Promise.all(
      managers.map(async (m): Promise<[string, DataManagerStatus] | undefined> => {
        try {
          const dm = machine.resource(m.name, defineApi<{ doCommand(c: object): Promise<{ status?: DataManagerStatus }> }>(DATA_MANAGER_API));
          return [m.name, (await dm.doCommand({ status: {} })).status ?? {}];
        } catch {
          return undefined; // stopped between the listing and the call: left out of this scrape
        }
      }),
    );
    return results.filter((r) => r !== undefined);
  };
  return () => {
    if (!last || Date.now() - last.at > 500) last = { at: Date.now(), reading: read() };
    return last.reading;
  };
}

/** Registers the machine's sources; the returned function removes them (at shutdown). */
export function observeMachine(machine: MachineView, sessions: { ids(): string[] }): () => void {
  const managers = dataManagerReader(machine);
  const per = (pick: (s: DataManagerStatus) => number | undefined) => async () =>
    (await managers()).map(([name, s]) => [{ data_manager: name }, pick(s) ?? 0] as const);
  const perMethod = (pick: (c: { records?: number; errors?: number }) => number | undefined) => async () =>
    (await managers()).flatMap(([name, s]) =>
      Object.entries(s.capture ?? {}).map(([method, c]) => [{ data_manager: name, method } as Labels, pick(c) ?? 0] as const),
    );
  const removers = [
    sessionsActive.observe(() => sessions.ids().length),
    captureRecords.observe(perMethod((c) => c.records)),
    captureErrors.observe(perMethod((c) => c.errors)),
    syncFiles.observe(per((s) => s.files_waiting)),
    syncBytes.observe(per((s) => s.bytes_waiting)),
    syncUploaded.observe(per((s) => s.uploaded_files)),
  ];
  return () => removers.forEach((remove) => remove());
}
