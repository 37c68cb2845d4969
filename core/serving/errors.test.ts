// The machine's error catalogue: each code once, each error with its code and name, and each message
// naming what it concerns (the field, file, host, flag or package) and the rule.
import test from 'ava';
import { status, type ServiceError } from '@grpc/grpc-js';
import { ConfigError } from '../../plugins/validation.js';
import * as errors from './errors.js';

test('every code of the machine catalogue is declared once and says its side', (t) => {
  t.is(new Set(errors.MACHINE_ERROR_CODES).size, errors.MACHINE_ERROR_CODES.length);
  t.is(errors.MACHINE_ERROR_CODES.length, 18);
  for (const code of errors.MACHINE_ERROR_CODES) t.regex(code, /^CORE_ERR_[A-Z0-9_]+$/);
});

test('each error carries its code and class name, and its message names its subject and rule', (t) => {
  const cases: [Error & { errorCode: string }, string, RegExp][] = [
    [new errors.InvalidConfigError([new ConfigError('components[0].name', 'is required')]), 'CORE_ERR_CONFIG_INVALID', /components\[0\]\.name: is required/],
    [new errors.VersionSpecError('latest', 'must be "stable"'), 'CORE_ERR_VERSION_SPEC', /version "latest": must be "stable"/],
    [new errors.FlagError('-port: must be a number'), 'CORE_ERR_FLAG', /-port: must be a number/],
    [
      new errors.ChecksumMismatchError('agent', 'https://x/a', 'aa', 'bb'),
      'CORE_ERR_AGENT_CHECKSUM',
      /agent: download from https:\/\/x\/a has sha256 bb, expected aa/,
    ],
    [new errors.DownloadError('platform-server', 'file:///b', 'gone'), 'CORE_ERR_AGENT_DOWNLOAD', /platform-server: cannot download file:\/\/\/b: gone/],
    [new errors.VersionResolutionError('agent', '^9', 'no release'), 'CORE_ERR_AGENT_VERSION_RESOLUTION', /agent: cannot resolve version "\^9": no release/],
    [new errors.CredentialsError('/etc/cloud.json', 'needs a "cloud" object'), 'CORE_ERR_AGENT_CREDENTIALS', /\/etc\/cloud\.json: needs a "cloud" object/],
    [new errors.NetworkInputError('psk', 'must be 8 to 63 characters'), 'CORE_ERR_NETWORK_INPUT', /psk: must be 8 to 63 characters/],
    [new errors.PortalInputError('credentials: not JSON'), 'CORE_ERR_PORTAL_INPUT', /credentials: not JSON/],
    [new errors.ProvisioningArgumentError('cloud: is required'), 'CORE_ERR_PROVISIONING_ARGUMENT', /cloud: is required/],
    [new errors.InsecureCredentialsError('10.1.2.3:8081'), 'CORE_ERR_INSECURE_CREDENTIALS', /plaintext to 10\.1\.2\.3:8081.*-allow-insecure-creds/],
    [new errors.PackageSourceError('not-found', 'no package org1/x'), 'CORE_ERR_PACKAGE_SOURCE', /no package org1\/x/],
    [new errors.PackageError('shapes', 'disk', 'package shapes: cannot be installed'), 'CORE_ERR_PACKAGE', /package shapes/],
    [new errors.CpuProfileError('/x.cpuprofile', 'is a directory'), 'CORE_ERR_CPU_PROFILE', /-cpuprofile \/x\.cpuprofile: is a directory/],
    [new errors.ProbeTimeoutError(10), 'CORE_ERR_PROBE_TIMEOUT', /timed out after 10 ms/],
    [new errors.WebCallError(status.RESOURCE_EXHAUSTED, 'message: larger than 4 MiB'), 'CORE_ERR_WEB_CALL', /message: larger than 4 MiB/],
    [new errors.ProfileRequestError('seconds: must be a number'), 'CORE_ERR_PROFILE_REQUEST', /seconds: must be a number/],
  ];
  for (const [err, code, message] of cases) {
    t.is(err.errorCode, code);
    t.is(err.name, err.constructor.name);
    t.regex(err.message, message, code);
  }
});

test('the fields callers read are kept: a refusal keeps its gRPC status as code, a package error its reason', (t) => {
  const cause = Object.assign(new Error('bad secret'), { code: status.UNAUTHENTICATED, details: 'bad secret', metadata: undefined }) as unknown as ServiceError;
  const refused = new errors.CredentialsRefusedError(cause);
  t.is(refused.errorCode, 'CORE_ERR_CREDENTIALS_REFUSED');
  t.is(refused.code, status.UNAUTHENTICATED);
  t.is(refused.cause, cause);
  t.regex(refused.message, /refused the machine credentials .*bad secret \(UNAUTHENTICATED\)/);
  t.is(new errors.PackageError('shapes', 'checksum', 'x').reason, 'checksum');
  t.is(new errors.WebCallError(status.INVALID_ARGUMENT, 'x').code, status.INVALID_ARGUMENT);
  const invalid = new errors.InvalidConfigError([new ConfigError('a', 'b'), new ConfigError('c', 'd')]);
  t.is(invalid.report(), 'invalid config:\n  a: b\n  c: d');
});
