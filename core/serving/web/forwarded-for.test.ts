// The forwarder's claim of a browser's address is believed only with this process' proof.
import test from 'ava';
import { Metadata } from '@grpc/grpc-js';
import { callerAddress, FORWARDED_FOR, FORWARDER_PROOF, markForwarded } from './forwarded-for.js';

test("a call marked by this process' forwarder comes from the browser's address", (t) => {
  const metadata = new Metadata();
  markForwarded(metadata, '203.0.113.7');
  t.is(callerAddress('127.0.0.1', metadata), '203.0.113.7');
  const mapped = new Metadata();
  markForwarded(mapped, '::ffff:198.51.100.2');
  t.is(callerAddress('127.0.0.1', mapped), '198.51.100.2', 'an IPv4 browser on a dual-stack socket, as its gRPC peer would show');
  const v6 = new Metadata();
  markForwarded(v6, '2001:db8::1');
  t.is(callerAddress('127.0.0.1', v6), '2001:db8::1');
});

test('a claimed address without the proof, or with a wrong one, is ignored: the transport peer counts', (t) => {
  const bare = new Metadata();
  bare.set(FORWARDED_FOR, '203.0.113.7');
  t.is(callerAddress('192.0.2.9', bare), '192.0.2.9');
  const forged = new Metadata();
  forged.set(FORWARDED_FOR, '203.0.113.7');
  forged.set(FORWARDER_PROOF, 'f'.repeat(64));
  t.is(callerAddress('192.0.2.9', forged), '192.0.2.9');
  const short = new Metadata();
  short.set(FORWARDED_FOR, '203.0.113.7');
  short.set(FORWARDER_PROOF, 'x');
  t.is(callerAddress('192.0.2.9', short), '192.0.2.9');
  t.is(callerAddress('192.0.2.9', undefined), '192.0.2.9');
  const nobody = new Metadata();
  markForwarded(nobody, undefined);
  t.is(callerAddress('192.0.2.9', nobody), '192.0.2.9', 'no browser address: nothing is claimed');
});
