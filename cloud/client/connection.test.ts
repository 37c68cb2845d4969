import test from 'ava';
import { parseServiceHost } from './connection.js';
import { ValueError } from './errors.js';

test('https service hosts use TLS on port 443 unless a port is given', (t) => {
  t.is(parseServiceHost('https://cloud.example.com').address, 'cloud.example.com:443');
  t.true(parseServiceHost('https://cloud.example.com').channel._isSecure());
  t.is(parseServiceHost('https://cloud.example.com:8443/').address, 'cloud.example.com:8443');
});

test('http and bare host:port service hosts are plaintext', (t) => {
  t.is(parseServiceHost('http://127.0.0.1:8081').address, '127.0.0.1:8081');
  t.false(parseServiceHost('127.0.0.1:8081').channel._isSecure());
  t.is(parseServiceHost('http://localhost').address, 'localhost:80');
});

test('a service host without a port or scheme is a value error', (t) => {
  t.throws(() => parseServiceHost('cloud.example.com'), { instanceOf: ValueError, message: /port/ });
  t.throws(() => parseServiceHost('ftp://x:1/path/more'), { instanceOf: ValueError });
});

test('a root certificate is for https service hosts only', (t) => {
  // The PEM is checked when the channel connects, not here; what matters is that plaintext refuses it.
  const root = Buffer.from('-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
  t.true(parseServiceHost('https://localhost:8443', root).channel._isSecure());
  t.throws(() => parseServiceHost('http://localhost:8081', root), { instanceOf: ValueError, message: /rootCertificates needs an https:\/\/ serviceHost/ });
  t.throws(() => parseServiceHost('localhost:8081', root), { instanceOf: ValueError, message: /rootCertificates/ });
});
