// The captive portal: the form lists the visible networks by signal, checks redirect to it, bad input
// is answered with an error naming the field, credentials are stored with mode 0600, a flood of
// requests and an oversized body are refused without harm, and the dnsmasq redirect for both settings.
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '../agent-log.js';
import { CaptivePortal, PORTAL_MAX_BODY } from './captive-portal.js';
import { DNSMASQ_SHARED_FILE, captiveDnsConfig, writeCaptiveDns } from './captive-dns.js';

async function portal(t: { teardown(fn: () => void | Promise<void>): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'portal-'));
  const calls = { activity: 0, submitted: [] as [string, string][], credentials: 0 };
  const credentialsFile = join(dir, 'platform.json');
  const p = new CaptivePortal({
    hooks: {
      userActivity: () => void calls.activity++,
      listNetworks: async () => [
        { ssid: 'weak', security: 'open', signal: 10, connected: false },
        { ssid: 'strong <b>', security: 'wpa-psk', signal: 90, connected: false },
        { ssid: 'middle', security: 'sae', signal: 50, connected: false },
      ],
      submitNetwork: async (ssid, psk) => void calls.submitted.push([ssid, psk]),
      credentialsSaved: () => void calls.credentials++,
    },
    credentialsFile,
    logger: new Logger('silent'),
    title: 'Acme Rover setup',
  });
  const addr = await p.listen('127.0.0.1', 0);
  t.teardown(async () => {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; body: string; location?: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: addr.port, method, path, headers: body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {} },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: text, location: res.headers.location }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const form = (fields: Record<string, string>) => send('POST', '/', new URLSearchParams(fields).toString());
  return { calls, credentialsFile, send, form, dir };
}

test('the form lists the visible networks by signal, escaped; checks are redirected to it; each request is user activity', async (t) => {
  const { calls, send } = await portal(t);
  const page = await send('GET', '/');
  t.is(page.status, 200);
  const order = ['strong &#60;b&#62;', 'middle', 'weak'].map((s) => page.body.indexOf(`value="${s}"`));
  t.true(order.every((i) => i > 0) && order[0] < order[1] && order[1] < order[2], page.body);
  t.false(page.body.includes('<b>'));
  const probe = await send('GET', '/generate_204');
  t.is(probe.status, 302);
  t.is(probe.location, '/');
  t.is(calls.activity, 2);
});

test('bad input is answered with the form and an error naming the field; nothing is saved', async (t) => {
  const { calls, form, credentialsFile } = await portal(t);
  const cases: [Record<string, string>, string][] = [
    [{ ssid: 'x'.repeat(33), password: 'long-enough' }, 'ssid: must be at most 32 bytes (is 33)'],
    [{ ssid: '', password: 'long-enough' }, 'ssid: is required for a wifi network'],
    [{ ssid: 'home', password: 'short' }, 'psk: must be empty (open network) or 8 to 63 characters (WPA2)'],
    [{ ssid: 'home', password: 'long-enough', credentials: '{"cloud": ' }, 'credentials: is not valid JSON'],
    [
      { ssid: 'home', password: 'long-enough', credentials: JSON.stringify({ cloud: { app_address: 'https://c:443', id: 'part' } }) },
      'credentials: cloud.api_key: needs either api_key {id, key} or secret (the part secret), not both',
    ],
  ];
  for (const [fields, error] of cases) {
    const res = await form(fields);
    t.is(res.status, 400, error);
    t.true(res.body.includes(error), `${error} in ${res.body}`);
  }
  t.deepEqual(calls.submitted, []);
  t.false(existsSync(credentialsFile));
});

test('a good submission stores the credentials with mode 0600, then joins the network and reports the credentials', async (t) => {
  const { calls, form, credentialsFile } = await portal(t);
  const creds = { cloud: { app_address: 'https://cloud.example:443', id: 'part-1', secret: 's3cret' } };
  const res = await form({ ssid: 'home', password: 'home-password', credentials: JSON.stringify(creds) });
  t.is(res.status, 200);
  t.true(res.body.includes('joining home'));
  t.deepEqual(JSON.parse(readFileSync(credentialsFile, 'utf8')), creds);
  t.is(statSync(credentialsFile).mode & 0o777, 0o600);
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(calls.submitted, [['home', 'home-password']]);
  t.is(calls.credentials, 1);
});

test('credentials never replace an offline machine config', async (t) => {
  const { form, credentialsFile } = await portal(t);
  writeFileSync(credentialsFile, JSON.stringify({ agent: {} }));
  const res = await form({ ssid: 'home', password: 'home-password', credentials: JSON.stringify({ cloud: { app_address: 'a', id: 'p', secret: 's' } }) });
  t.is(res.status, 400);
  t.true(res.body.includes('credentials: this machine runs from the offline config'));
  t.deepEqual(JSON.parse(readFileSync(credentialsFile, 'utf8')), { agent: {} });
});

test('a flood: an oversized body is refused with 413, and 200 requests at once are all answered', async (t) => {
  const { send, form } = await portal(t);
  const big = await send('POST', '/', `ssid=${'a'.repeat(PORTAL_MAX_BODY + 1)}`);
  t.is(big.status, 413);
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? send('GET', '/') : form({ ssid: 'x'.repeat(40), password: '' }))));
  t.deepEqual([...new Set(answers.map((a) => a.status))].sort(), [200, 400]);
  t.is((await send('GET', '/')).status, 200, 'still serving');
});

test('the dnsmasq drop-in redirects every name, or only .setup names with disable_captive_portal_redirect', async (t) => {
  const head = '# Written by platform-agent (network_configuration.disable_captive_portal_redirect); edits are overwritten.\n';
  t.is(captiveDnsConfig(false), `${head}address=/#/10.42.0.1\n`);
  t.is(captiveDnsConfig(true), `${head}address=/setup/10.42.0.1\n`);
  const root = mkdtempSync(join(tmpdir(), 'portal-dns-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  t.true(await writeCaptiveDns(root, true));
  t.false(await writeCaptiveDns(root, true), 'unchanged content is not rewritten');
  t.is(readFileSync(join(root, DNSMASQ_SHARED_FILE), 'utf8'), captiveDnsConfig(true));
});
