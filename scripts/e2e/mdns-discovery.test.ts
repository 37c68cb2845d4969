// mDNS discovery end to end: the real platform-server advertising itself, the TypeScript client's
// discoverMachines finding it, on a network the test controls (testing/mdns-link.ts: a veth pair into a
// network namespace, or loopback where namespaces are not permitted; the titles say which ran). Here in
// scripts/e2e/ because it uses both sides (core/ never imports cloud/).
// Serial: every runtime here advertises the same instance name (the host's), on the same link.
import test from 'ava';
import { createSocket } from 'node:dgram';
import { hostname, tmpdir } from 'node:os';
import { decode, encode } from 'dns-packet';
import { discoverMachines } from '../../cloud/client/discovery.js';
import { RobotClient } from '../../cloud/client/robot-client.js';
import { dnsLabel, SERVICE_TYPE } from '../../core/serving/mdns/rpc-service.js';
import { MDNS_GROUP, MDNS_PORT, openMdnsTransport, type MdnsResponse } from '../../core/serving/mdns/transport.js';
import { call } from '../../core/server/testing/grpc.js';
import { mdnsLink } from '../../core/server/testing/mdns-link.js';
import { eventually, spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir } from '../../cloud/testing/spawn-cloud.js';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { credentialsOf, type Machine } from './testing/online-helpers.js';

const link = await mdnsLink();
const on = link.why ? `${link.mode} (network namespaces not permitted here: ${link.why})` : link.mode;
if (link.why) console.log(`mdns-discovery.test.ts runs on ${on}`);
test.after.always(() => link.close());

const NAME = dnsLabel(hostname().split('.')[0]);
const portOf = (address: string) => Number(address.slice(address.lastIndexOf(':') + 1));

function start(args: string[] = []): Promise<SpawnedRuntime> {
  return spawnRuntime({ network: { bind_address: link.bindAddress } }, { args, prefix: link.prefix });
}

const discover = () => discoverMachines({ interfaces: [link.clientInterface], timeoutMs: 1000 });

test.serial(`the runtime is found by the client with its name, gRPC port and address, and answers there [${on}]`, async (t) => {
  const runtime = await start();
  t.teardown(() => runtime.stop());
  const port = portOf(runtime.address);
  const machines = await eventually(discover, (list) => list.some((m) => m.port === port), { what: 'the machine to be discovered' });
  const found = machines.find((m) => m.port === port)!;
  t.is(found.name, NAME);
  t.is(found.host, NAME);
  t.deepEqual(found.addresses, [link.serverAddress]);
  t.deepEqual(found.txt, ['grpc', 'webrtc'], 'with -webrtc (the default) it answers WebRTC signaling too');
  // The discovered address is the real one: the machine answers there.
  const client = await RobotClient.connect({ address: `${found.addresses[0]}:${found.port}`, session: false });
  t.teardown(() => client.close());
  const status = await call(client.robot, 'getMachineStatus', {});
  t.truthy(status);
});

test.serial(`-disable-mdns: the runtime is not found, while one beside it without the flag is [${on}]`, async (t) => {
  const [silent, loud] = await Promise.all([start(['-disable-mdns']), start()]);
  t.teardown(() => Promise.all([silent.stop(), loud.stop()]));
  // Found the advertised one: discovery works here, so not finding the other means something.
  const machines = await eventually(discover, (list) => list.some((m) => m.port === portOf(loud.address)), { what: 'the advertising runtime' });
  t.false(machines.some((m) => m.port === portOf(silent.address)));
  t.false((await discover()).some((m) => m.port === portOf(silent.address)));
  t.notRegex(silent.output(), /mDNS|not supported/);
});

test.serial(`announces at start without being asked, and says goodbye with TTL 0 at stop [${on}]`, async (t) => {
  // This socket never queries: whatever it hears was sent unasked.
  const listener = await openMdnsTransport({ interfaceAddress: link.clientInterface });
  t.teardown(() => listener.close());
  const heard: MdnsResponse[] = [];
  listener.onResponse((response) => heard.push(response));
  const runtime = await start();
  const port = portOf(runtime.address);
  const srvs = (ttl: (n: number) => boolean) =>
    heard.flatMap((r) => r.answers).filter((a) => a.type === 'SRV' && a.name === `${NAME}.${SERVICE_TYPE}` && a.data.port === port && ttl(a.ttl ?? -1));
  await eventually(
    () => srvs((ttl) => ttl > 0).length,
    (n) => n >= 1,
    { what: 'the announcement' },
  );
  t.is(await runtime.stop(), 0);
  await eventually(
    () => srvs((ttl) => ttl === 0).length,
    (n) => n >= 1,
    { what: 'the goodbye' },
  );
  const goodbye = heard.find((r) => r.answers.some((a) => a.type === 'SRV' && a.ttl === 0))!;
  t.deepEqual(goodbye.answers.map((a) => [a.type, (a as { ttl?: number }).ttl]).sort(), [
    ['A', 0],
    ['PTR', 0],
    ['SRV', 0],
    ['TXT', 0],
  ]);
});

test.serial(`garbage and hostile packets do not crash the runtime, and it keeps answering [${on}]`, async (t) => {
  const runtime = await start();
  t.teardown(() => runtime.stop());
  const port = portOf(runtime.address);
  await eventually(discover, (list) => list.some((m) => m.port === port), { what: 'the machine before the garbage' });
  const socket = createSocket({ type: 'udp4', reuseAddr: true });
  await new Promise<void>((resolve) => socket.bind(0, link.clientInterface, resolve));
  socket.setMulticastInterface(link.clientInterface);
  t.teardown(() => socket.close());
  const header = (qd: number) => Buffer.from([0, 0, 0, 0, qd >> 8, qd & 255, 0, 0, 0, 0, 0, 0]);
  const packets: Buffer[] = [
    Buffer.alloc(0),
    Buffer.from([1]),
    header(0xffff), // promises 65535 questions, holds none
    Buffer.concat([header(1), Buffer.from([0xc0, 12, 0, 12, 0, 1])]), // a name that points at itself
    Buffer.concat([header(1), Buffer.from([63]), Buffer.alloc(10)]), // a label longer than the packet
    Buffer.alloc(9000, 0xff),
    ...Array.from({ length: 50 }, (_, i) => Buffer.from(Array.from({ length: 12 + i * 7 }, (_, j) => (i * 31 + j * 17) & 255))),
    // Decodable but hostile: our own names with odd types and classes, a forged answer for our name,
    // hundreds of questions, a name of 250 bytes.
    encode({
      type: 'query',
      questions: [
        { name: SERVICE_TYPE, type: 'ANY' as 'A', class: 'ANY' },
        { name: `${NAME}.${SERVICE_TYPE}`, type: 'NSEC' },
      ],
    }),
    encode({ type: 'response', answers: [{ name: `${NAME}.${SERVICE_TYPE}`, type: 'SRV', ttl: 0, data: { port: 1, target: 'elsewhere.local' } }] }),
    encode({ type: 'query', questions: Array.from({ length: 300 }, (_, i) => ({ name: `${i}.${SERVICE_TYPE}`, type: 'PTR' as const })) }),
    encode({ type: 'query', questions: [{ name: `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.local`, type: 'A' }] }),
  ];
  for (const packet of packets) await new Promise((resolve) => socket.send(packet, MDNS_PORT, MDNS_GROUP, resolve));
  // A one-shot query from another port than 5353 gets a unicast answer with its id (RFC 6762 §6.7).
  // (The hostile queries above came from this port too: their replies may arrive first.)
  const replies: ReturnType<typeof decode>[] = [];
  socket.on('message', (message) => replies.push(decode(message)));
  await new Promise((resolve) =>
    socket.send(encode({ type: 'query', id: 4242, questions: [{ name: SERVICE_TYPE, type: 'PTR' }] }), MDNS_PORT, MDNS_GROUP, resolve),
  );
  const reply = await eventually(
    () => replies.find((r) => r.id === 4242),
    (r) => r !== undefined,
    { what: 'the unicast reply' },
  );
  t.true(reply!.answers!.some((a) => a.type === 'PTR' && a.data === `${NAME}.${SERVICE_TYPE}`));
  // Still alive, still advertising, still serving.
  const machines = await eventually(discover, (list) => list.some((m) => m.port === port), { what: 'the machine after the garbage' });
  t.deepEqual(machines.find((m) => m.port === port)!.addresses, [link.serverAddress]);
  t.is(runtime.process.exitCode, null);
  const client = await RobotClient.connect({ address: `${link.serverAddress}:${port}`, session: false });
  t.teardown(() => client.close());
  t.truthy(await call(client.robot, 'getMachineStatus', {}));
  t.is(await runtime.stop(), 0);
});

test.serial(`an online runtime is advertised under its part's name, from the cloud [${on}]`, async (t) => {
  // The cloud listens on the test's side of the link, where the runtime in the namespace reaches it.
  const dataDir = tempDataDir();
  const onlineDir = mkdtempSync(join(tmpdir(), 'platform-online-'));
  const cloud = await spawnCloud(dataDir, ['--host', link.clientInterface]);
  t.teardown(async () => {
    await cloud.stop();
    removeDataDir(dataDir);
    removeDataDir(onlineDir);
  });
  const org = await adminJson(dataDir, ['org', 'create', 'acme']);
  const rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  const runtime = await spawnRuntime(
    { ...credentialsOf(rover, `${link.clientInterface}:${portOf(cloud.address)}`), network: { bind_address: link.bindAddress } },
    // Plaintext to a cloud that is not on loopback (the veth link) needs the flag.
    { prefix: link.prefix, args: ['-allow-insecure-creds'], env: { PLATFORM_ONLINE_DIR: onlineDir } },
  );
  t.teardown(() => runtime.stop());
  const port = portOf(runtime.address);
  const machines = await eventually(discover, (list) => list.some((m) => m.port === port), { what: 'the online machine' });
  const found = machines.find((m) => m.port === port)!;
  t.is(found.name, 'rover-main', "the part's name (machine create names its main part <machine>-main)");
  t.is(found.host, NAME, 'SRV still points at the host');
  t.deepEqual(found.addresses, [link.serverAddress]);
});

test.serial(`-webrtc=false: TXT says grpc only [${on}]`, async (t) => {
  const runtime = await start(['-webrtc=false']);
  t.teardown(() => runtime.stop());
  const port = portOf(runtime.address);
  const machines = await eventually(discover, (list) => list.some((m) => m.port === port), { what: 'the machine' });
  t.deepEqual(machines.find((m) => m.port === port)!.txt, ['grpc']);
});
