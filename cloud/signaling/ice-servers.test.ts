import test from 'ava';
import { iceServersFromEnv } from './ice-servers.js';

test('no setting: no ICE servers', (t) => {
  t.deepEqual(iceServersFromEnv({}), []);
});

test('the setting lists STUN and TURN servers, with TURN credentials', (t) => {
  const env = {
    PLATFORM_WEBRTC_ICE_SERVERS: '[{"urls":"stun:127.0.0.1:3478"},{"urls":["turn:127.0.0.1:3478?transport=udp"],"username":"u","credential":"p"}]',
  };
  t.deepEqual(iceServersFromEnv(env), [
    { urls: ['stun:127.0.0.1:3478'], username: '', credential: '' },
    { urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'p' },
  ]);
});

test('a malformed setting is an error naming the setting and the entry', (t) => {
  t.throws(() => iceServersFromEnv({ PLATFORM_WEBRTC_ICE_SERVERS: '{' }), { message: /^PLATFORM_WEBRTC_ICE_SERVERS: not JSON/ });
  t.throws(() => iceServersFromEnv({ PLATFORM_WEBRTC_ICE_SERVERS: '{}' }), { message: /expected a JSON array/ });
  t.throws(() => iceServersFromEnv({ PLATFORM_WEBRTC_ICE_SERVERS: '[{"urls":["http://x"]}]' }), {
    message: /^PLATFORM_WEBRTC_ICE_SERVERS\[0\]\.urls: expected stun:/,
  });
  t.throws(() => iceServersFromEnv({ PLATFORM_WEBRTC_ICE_SERVERS: '[{"urls":["turn:x"],"username":3}]' }), {
    message: 'PLATFORM_WEBRTC_ICE_SERVERS[0].username: expected a string',
  });
});
