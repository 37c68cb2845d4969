// TLS: with certificates configured the runtime serves TLS; -no-tls serves plaintext anyway.
import test from 'ava';
import { credentials } from '@grpc/grpc-js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { spawnRuntime } from './testing/spawn-runtime.js';

function selfSigned() {
  const dir = mkdtempSync(join(tmpdir(), 'platform-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

test.serial('certificates in network turn TLS on, and -no-tls turns it off', async (t) => {
  const { cert, key } = selfSigned();
  const network = { bind_address: 'localhost:0', tls_cert_file: cert, tls_key_file: key };
  const secure = await spawnRuntime({ network, components: [] });
  t.teardown(() => secure.stop());
  const tlsClient = new RobotServiceClient(secure.address, credentials.createSsl(readFileSync(cert)));
  t.regex((await call(tlsClient, 'getVersion', {})).version, /^\d+\.\d+\.\d+/);
  const plain = new RobotServiceClient(secure.address, insecure());
  await t.throwsAsync(call(plain, 'getVersion', {}));
  plain.close();

  const noTls = await spawnRuntime({ network, components: [] }, { args: ['-no-tls'] });
  t.teardown(() => noTls.stop());
  t.regex((await call(new RobotServiceClient(noTls.address, insecure()), 'getVersion', {})).version, /^\d+\.\d+\.\d+/);
});

test('tls_cert_file without tls_key_file is a config error', async (t) => {
  const { cert } = selfSigned();
  await t.throwsAsync(spawnRuntime({ network: { bind_address: 'localhost:0', tls_cert_file: cert }, components: [] }), {
    message: /network\.tls_key_file: tls_cert_file and tls_key_file must be set together/,
  });
});
