import test from 'ava';
import { flag, FlagError, parseFlags, pendingFlags, stringFlag, usage } from './flags.js';

test('Go-style flags: one or two dashes, -flag value and -flag=value', (t) => {
  const flags = parseFlags(['-config', 'a.json', '--debug', '-log-file=/tmp/x.log', '-no-tls=false']);
  t.is(stringFlag(flags, 'config'), 'a.json');
  t.true(flag(flags, 'debug'));
  t.is(stringFlag(flags, 'log-file'), '/tmp/x.log');
  t.false(flag(flags, 'no-tls'));
  t.deepEqual(flags.given, ['config', 'debug', 'log-file', 'no-tls']);
});

test('boolean flags default to false, except ftdc and webrtc which default to true', (t) => {
  const flags = parseFlags([]);
  t.false(flag(flags, 'debug'));
  t.true(flag(flags, 'ftdc'));
  t.true(flag(flags, 'webrtc'));
  t.false(flag(parseFlags(['-webrtc=false']), 'webrtc'));
});

test('unknown flags, missing values, bad booleans and positional arguments are errors', (t) => {
  t.is(t.throws(() => parseFlags(['-nope']), { instanceOf: FlagError, message: 'flag provided but not defined: -nope' })?.errorCode, 'CORE_ERR_FLAG');
  t.throws(() => parseFlags(['-config']), { message: 'flag needs an argument: -config <filename>' });
  t.throws(() => parseFlags(['-debug=maybe']), { message: 'invalid boolean value "maybe" for -debug: use true or false' });
  t.throws(() => parseFlags(['stray']), { message: 'unexpected argument "stray": platform-server takes flags only' });
});

test('-h is help, and every flag of the spec is in the usage text', (t) => {
  t.true(flag(parseFlags(['-h']), 'help'));
  const text = usage();
  for (const name of [
    'allow-insecure-creds',
    'config',
    'cpuprofile',
    'debug',
    'disable-mdns',
    'dump-resources',
    'ftdc',
    'log-file',
    'network-check',
    'no-tls',
    'output-telemetry',
    'reveal-sensitive-config-diffs',
    'shareddir',
    'untrusted-env',
    'version',
    'webprofile',
    'webrtc',
  ]) {
    t.regex(text, new RegExp(`-${name}\\b`), name);
  }
});

test('flags that have their own issue are reported as pending when given', (t) => {
  t.deepEqual(pendingFlags(parseFlags(['-shareddir', 'x', '-webprofile', '-debug', '-webrtc', '-disable-mdns'])), []);
  t.deepEqual(pendingFlags(parseFlags(['-cpuprofile', 'x', '-ftdc=false', '-network-check', '-output-telemetry'])), [], 'implemented flags are not pending');
  t.deepEqual(pendingFlags(parseFlags(['-disable-mdns'])), [], '-disable-mdns is implemented');
  t.deepEqual(pendingFlags(parseFlags(['-webrtc=false'])), [], '-webrtc is implemented');
  t.notRegex(
    usage()
      .split('\n')
      .find((l) => l.includes('-disable-mdns'))!,
    /not supported/,
  );
});
