// /metrics on platform-cloud's web port: Prometheus text that a strict parser accepts, whose counters
// move with the calls made through the real program (gRPC calls per method and code, user queries
// through admission), with the admission queue, training jobs by state and the process metrics.
import test from 'ava';
import { parsePrometheusText, sampleValue } from '../../core/serving/telemetry/testing/prom-text.js';
import { codeOf, startFixture } from '../testing/tenancy-fixture.js';

const SQL = '/platform.app.data.v1.DataService/TabularDataBySQL';

async function scrape(webUrl: string) {
  const res = await fetch(new URL('/metrics', webUrl));
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parsePrometheusText(await res.text());
}

test('/metrics parses as Prometheus text and counts the calls and queries made through platform-cloud', async (t) => {
  const fx = await startFixture();
  t.teardown(() => fx.close());
  const url = fx.cloud.webUrl;
  const data = fx.client(fx.keys.ownerA).dataClient;

  const before = await scrape(url);
  await data.tabularDataBySQL(fx.orgA, 'SELECT 1 AS one');
  await data.tabularDataBySQL(fx.orgA, 'SELECT 2 AS two');
  const denied = await t.throwsAsync(fx.client(fx.keys.ownerB).dataClient.tabularDataBySQL(fx.orgA, 'SELECT 1'));
  const deniedCode = codeOf(denied);
  const after = await scrape(url);

  const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
  t.is(delta('grpc_server_handled_total', { grpc_method: SQL, grpc_code: 'OK' }), 2);
  t.is(deniedCode, 7);
  t.is(delta('grpc_server_handled_total', { grpc_method: SQL, grpc_code: 'PERMISSION_DENIED' }), 1);
  t.is(delta('grpc_server_handling_seconds_count', { grpc_method: SQL, grpc_code: 'OK' }), 2);
  // Both admitted queries held a slot and waited for none.
  t.is(delta('platform_query_seconds_count'), 2);
  t.is(delta('platform_query_admission_wait_seconds_count'), 2);
  t.is(sampleValue(after, 'platform_query_admission_queued'), 0);
  t.is(sampleValue(after, 'platform_query_admission_running'), 0);
  t.is(after.get('platform_training_jobs')?.type, 'gauge');
  t.true(sampleValue(after, 'process_resident_memory_bytes') > 0, 'process metrics are served');
});
