// The quiet organization's measurements in a process of their own (as a real tenant is, on its own
// machine). The attacks run their clients in the bench's process: 2000 upload streams opened at once, or
// 10,000-entry log batches encoded in a loop, held the bench's event loop for up to 367 ms, and a
// measurement taken on that loop counted the attacker's client time as the cloud's delay.
//
// Started by harness.ts with argv: <address> <keyId> <key> <orgId> <partId>. Each IPC message
// {samples, deadlineMs} runs that many rounds of the two calls, one at a time, and is answered with
// {filter, upload} (milliseconds per call) or {error}; 'stop' ends the process.
import { createCloudClient } from '../../../cloud/client/cloud-client.js';

const [address, keyId, key, orgId, partId] = process.argv.slice(2);
const client = createCloudClient({ serviceHost: `http://${address}`, credentials: { type: 'api-key', authEntity: keyId, payload: key } });
const sensor = 'rdk:component:sensor';
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

async function measure(samples: number, deadline: number): Promise<{ filter: number[]; upload: number[] }> {
  const out = { filter: [] as number[], upload: [] as number[] };
  for (let i = 0; i < samples && Date.now() < deadline; i++) {
    let t = process.hrtime.bigint();
    await client.dataClient.tabularDataByFilter({ organizationIds: [orgId] }, { limit: 1 });
    out.filter.push(ms(t));
    const now = Date.now();
    t = process.hrtime.bigint();
    await client.dataClient.tabularDataCaptureUpload(
      Array.from({ length: 10 }, (_, k) => ({ readings: { v: k } })),
      partId,
      sensor,
      'thermo',
      'Readings',
      Array.from({ length: 10 }, (_, k) => [new Date(now + k), new Date(now + k + 1)] as [Date, Date]),
    );
    out.upload.push(ms(t));
  }
  return out;
}

process.on('message', (message: 'stop' | { samples: number; deadlineMs: number }) => {
  if (message === 'stop') {
    client.close();
    process.exit(0);
  }
  measure(message.samples, Date.now() + message.deadlineMs).then(
    (samples) => process.send!(samples),
    (err: unknown) => process.send!({ error: (err as Error).message }),
  );
});
process.send!('ready');
