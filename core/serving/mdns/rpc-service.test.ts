import test from 'ava';
import { answerQuestions, dnsLabel, MachineCollector, serviceRecords, SERVICE_TYPE, type Advertisement } from './rpc-service.js';
import { onSubnet } from './transport.js';

const ad: Advertisement = { instance: 'rover', host: 'rover', port: 8080, txt: ['grpc'] };

test('a browse (PTR _rpc._tcp.local) is answered with the instance, and SRV, TXT and A as additionals', (t) => {
  const reply = answerQuestions(ad, '10.0.0.5', [{ name: '_RPC._tcp.local', type: 'PTR' }])!;
  t.deepEqual(
    reply.answers.map((a) => [a.type, a.name]),
    [['PTR', SERVICE_TYPE]],
  );
  t.deepEqual(
    reply.additionals.map((a) => [a.type, a.name]),
    [
      ['SRV', 'rover._rpc._tcp.local'],
      ['TXT', 'rover._rpc._tcp.local'],
      ['A', 'rover.local'],
    ],
  );
  const srv = reply.additionals[0] as { data: { port: number; target: string } };
  t.deepEqual([srv.data.port, srv.data.target], [8080, 'rover.local']);
});

test('SRV, TXT, A, ANY and service enumeration are answered; other names are not', (t) => {
  t.deepEqual(
    answerQuestions(ad, '10.0.0.5', [{ name: 'rover._rpc._tcp.local', type: 'ANY' }])!.answers.map((a) => a.type),
    ['SRV', 'TXT'],
  );
  t.deepEqual(
    answerQuestions(ad, '10.0.0.5', [{ name: 'rover.local', type: 'A' }])!.answers.map((a) => (a as { data?: unknown }).data),
    ['10.0.0.5'],
  );
  t.deepEqual(
    answerQuestions(ad, '10.0.0.5', [{ name: '_services._dns-sd._udp.local', type: 'PTR' }])!.answers.map((a) => (a as { data?: unknown }).data),
    [SERVICE_TYPE],
  );
  t.is(
    answerQuestions(ad, '10.0.0.5', [
      { name: 'other._rpc._tcp.local', type: 'SRV' },
      { name: 'rover.local', type: 'AAAA' },
    ]),
    undefined,
  );
  t.is(answerQuestions(ad, '10.0.0.5', [{ name: 42, type: {} }, {}]), undefined, 'malformed questions are no questions');
});

test('the collector builds machines from records, skips malformed ones, and forgets on goodbye', (t) => {
  const c = new MachineCollector();
  const r = serviceRecords({ ...ad, txt: ['grpc', 'webrtc'] }, '10.0.0.5');
  c.add([r.ptr, r.srv, r.txt, r.a]);
  c.add([
    null,
    'x',
    { name: SERVICE_TYPE, type: 'PTR', data: 'not-ours.example' },
    { name: 'rover._rpc._tcp.local', type: 'SRV', data: { port: 'x', target: 5 } },
    { name: 'rover.local', type: 'A', data: 'not-an-ip' },
    { name: 'bad._rpc._tcp.local', type: 'SRV', data: null },
  ]);
  t.deepEqual(c.machines(), [{ name: 'rover', host: 'rover', port: 8080, addresses: ['10.0.0.5'], txt: ['grpc', 'webrtc'] }]);
  c.add([{ name: SERVICE_TYPE, type: 'PTR', ttl: 4500, data: 'Lone._rpc._tcp.local' }]);
  t.deepEqual(c.unresolved(), ['Lone._rpc._tcp.local'], 'announced without SRV: to be asked for');
  const bye = serviceRecords(ad, '10.0.0.5', 0);
  c.add([bye.ptr, bye.srv]);
  t.deepEqual(c.machines(), []);
});

test('instance names are one DNS label; subnets are compared with the netmask', (t) => {
  t.is(dnsLabel('robot.example.com'), 'robot-example-com');
  t.is(dnsLabel(''), 'machine');
  t.is(Buffer.byteLength(dnsLabel('é'.repeat(40))), 62);
  t.true(onSubnet({ address: '10.1.2.3', netmask: '255.255.255.0' }, '10.1.2.200'));
  t.false(onSubnet({ address: '10.1.2.3', netmask: '255.255.255.0' }, '10.1.3.1'));
  t.false(onSubnet({ address: '10.1.2.3', netmask: '255.255.255.0' }, 'fe80::1'));
});
