// Spans of data capture (core/datamanager/capture-tracing.ts) on the real runtime with the machine
// config's tracing sending to a real OTLP/HTTP receiver: each stored capture batch is a root span
// `capture <resource>.<method>` with its counts, and its write to the capture file is its child.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver } from '../serving/telemetry/testing/otlp-receiver.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

test('a capture batch is a span with its file write as a child, at the OTLP receiver', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const runtime = await spawnRuntime({
    tracing: { enabled: true, otlp_endpoint: receiver.url },
    components: [
      {
        name: 'thermo',
        api: 'core:component:sensor',
        model: 'fake',
        attributes: { readings: { t: 1 } },
        service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 20 }] } }],
      },
    ],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        attributes: { capture_dir: mkdtempSync(join(tmpdir(), 'capture-trace-')), sync_disabled: true },
      },
    ],
  });
  t.teardown(() => runtime.stop());
  const pair = await eventually(
    () => {
      const batches = receiver.spans.filter((s) => s.name === 'capture thermo.Readings');
      const writes = receiver.spans.filter((s) => s.name === 'capture write');
      for (const batch of batches) {
        const write = writes.find((w) => w.parentSpanId === batch.spanId);
        if (write) return { batch, write };
      }
      return undefined;
    },
    (found) => found !== undefined,
    { what: 'a capture batch span and its write span', timeoutMs: 60_000 },
  );
  const { batch, write } = pair!;
  t.is(batch.service, 'platform-server');
  t.is(batch.parentSpanId, undefined, 'a batch starts its own trace');
  t.is(write.traceId, batch.traceId);
  t.is(batch.attributes['platform.resource'], 'thermo');
  t.is(batch.attributes['platform.method'], 'Readings');
  const records = batch.attributes['platform.capture.records'] as number;
  t.true(records >= 1, `records stored: ${records}`);
  t.is(batch.attributes['platform.capture.errors'], 0);
  t.is(write.attributes['platform.capture.records'], records, 'one write per batch (no rotation here)');
  t.true((write.attributes['platform.capture.bytes'] as number) > 0);
  t.is(batch.status.code ?? 0, 0);
});
