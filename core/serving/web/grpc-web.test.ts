// gRPC-Web framing and the web port's address rule.
import test from 'ava';
import { frame, requestMessage } from './grpc-web.js';
import { webBindAddress } from './web-server.js';

test('a frame is the flag, a big-endian length and the payload; requestMessage takes the first data frame back', (t) => {
  const framed = frame(0, Buffer.from([1, 2, 3]));
  t.deepEqual([...framed], [0, 0, 0, 0, 3, 1, 2, 3]);
  t.deepEqual([...requestMessage(framed)], [1, 2, 3]);
  t.deepEqual([...requestMessage(frame(0, Buffer.alloc(0)))], []);
});

test('a malformed request body is refused naming what is wrong', (t) => {
  t.throws(() => requestMessage(Buffer.from([0, 0])), { message: /at least 5 bytes/ });
  t.throws(() => requestMessage(frame(0x80, Buffer.from('x'))), { message: /first frame must be a data frame \(flag 0\), not flag 128/ });
  t.throws(() => requestMessage(frame(0, Buffer.from('abcdef')).subarray(0, 8)), { message: /announces 6 bytes but the body holds 3/ });
});

test('the web port defaults to bind_address with its port + 1, keeps port 0, and an explicit web_bind_address wins', (t) => {
  t.is(webBindAddress({ bind_address: 'localhost:8080' }), 'localhost:8081');
  t.is(webBindAddress({ bind_address: '0.0.0.0:0' }), '0.0.0.0:0');
  t.is(webBindAddress({ bind_address: '[::1]:9000' }), '[::1]:9001');
  t.is(webBindAddress({ bind_address: 'localhost:65535' }), 'localhost:0');
  t.is(webBindAddress({ bind_address: 'localhost:8080', web_bind_address: '127.0.0.1:9999' }), '127.0.0.1:9999');
});
