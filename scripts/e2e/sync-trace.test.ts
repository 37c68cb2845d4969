// Trace context across machine and cloud (issue 34): with the machine config's `tracing` on, the data
// manager's worker makes a span of each sync upload and sends its context as `traceparent`; the cloud
// (OTEL_EXPORTER_OTLP_ENDPOINT) makes the call's SERVER span its child. Both programs send to one OTLP
// receiver, which sees the two spans in one trace.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture } from '../../cloud/testing/tenancy-fixture.js';
import { startOtlpReceiver } from '../../core/serving/telemetry/testing/otlp-receiver.js';
import { eventually, spawnRuntime } from '../../core/server/testing/spawn-runtime.js';

test("a sync upload's cloud span has the machine's upload span as parent", async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const fx = await startFixture({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  t.teardown(() => fx.close());
  const runtime = await spawnRuntime({
    cloud: { id: fx.machineA1.part_id, secret: fx.machineA1.part_secret, app_address: fx.cloud.address },
    tracing: { enabled: true, otlp_endpoint: receiver.url },
    components: [
      {
        name: 'thermo',
        api: 'core:component:sensor',
        model: 'fake',
        attributes: { readings: { t: 1 } },
        service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 10 }] } }],
      },
    ],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        attributes: { capture_dir: mkdtempSync(join(tmpdir(), 'sync-trace-')), sync_interval_mins: 0.02 },
      },
    ],
  });
  t.teardown(() => runtime.stop());
  const UPLOAD = 'platform.app.datasync.v1.DataSyncService/DataCaptureUpload';
  const linked = await eventually(
    () => {
      const machine = receiver.spans.filter((s) => s.service === 'platform-server' && s.name === 'sync DataCaptureUpload');
      const cloud = receiver.spans.filter((s) => s.service === 'platform-cloud' && s.name === UPLOAD);
      return cloud.flatMap((c) => machine.filter((m) => c.parentSpanId === m.spanId).map((m) => ({ machine: m, cloud: c })));
    },
    (pairs) => pairs.length > 0,
    { what: 'a cloud DataCaptureUpload span whose parent is the machine upload span', timeoutMs: 90_000 },
  );
  const { machine, cloud } = linked[0];
  t.is(cloud.traceId, machine.traceId);
  t.is(cloud.attributes['rpc.grpc.status_code'], 0);
  t.is(cloud.kind, 2, 'SERVER');
});
