// The captive portal served on the hotspot while provisioning: a page with a form (SSID, password, and
// optionally the machine's credentials JSON), and a redirect to it for every other path, which is what
// phones' captive-portal checks follow. Every request counts as user activity. Bad input is answered
// with the form again and an error naming the field; a body over 16 KiB is refused unread.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../agent-log.js';
import { credentialsFileContent, machineSourceOf } from '../credentials.js';
import { CredentialsError } from '../errors.js';
import { writeFileDurable } from '../../serving/durable-file.js';
import type { VisibleNetwork } from './backend.js';
import { NetworkInputError, userProfileOf } from './profiles.js';
import { PortalInputError } from '../../serving/errors.js';
export { PortalInputError };

export const PORTAL_MAX_BODY = 16 * 1024;
/** Concurrent connections; Node closes connections beyond it at once, so a flood cannot exhaust memory. */
export const PORTAL_MAX_CONNECTIONS = 256;

export interface PortalHooks {
  userActivity(): void;
  listNetworks(): Promise<VisibleNetwork[]>;
  /** Saves and joins the network (after the answer has been sent: joining stops the hotspot). */
  submitNetwork(ssid: string, psk: string): Promise<void>;
  /** New machine credentials are in the file: the agent restarts to run online with them. */
  credentialsSaved?(): void;
}

export interface CaptivePortalOptions {
  hooks: PortalHooks;
  /** Where submitted machine credentials are stored (mode 0600). */
  credentialsFile: string;
  logger: Logger;
  title: string;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Checks a submitted form; returns the credentials file content to write, if any. */
export function checkSubmission(form: URLSearchParams, credentialsPath: string): { ssid: string; psk: string; credentials?: string } {
  const ssid = form.get('ssid') ?? '';
  const psk = form.get('password') ?? '';
  userProfileOf(ssid, psk); // throws NetworkInputError naming ssid or psk
  const raw = (form.get('credentials') ?? '').trim();
  if (!raw) return { ssid, psk };
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (err) {
    throw new PortalInputError(`credentials: is not valid JSON (${(err as Error).message})`);
  }
  return { ssid, psk, credentials: credentialsContent(doc, credentialsPath) };
}

/** Checks a machine credentials document; returns the credentials file content. Throws PortalInputError. */
export function credentialsContent(doc: unknown, credentialsPath: string): string {
  try {
    const source = machineSourceOf(credentialsPath, doc);
    if (source.mode !== 'online') throw new PortalInputError('credentials: must hold a "cloud" object (the machine credentials)');
    return credentialsFileContent(source.credentials);
  } catch (err) {
    if (err instanceof CredentialsError) throw new PortalInputError(`credentials: ${err.message.replace(`${credentialsPath}: `, '')}`);
    throw err;
  }
}

export class CaptivePortal {
  private server?: Server;

  constructor(private readonly opts: CaptivePortalOptions) {}

  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = createServer((req, res) => void this.handle(req, res).catch((err: Error) => this.fail(res, err)));
    server.maxConnections = PORTAL_MAX_CONNECTIONS;
    server.requestTimeout = 30_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }

  private fail(res: ServerResponse, err: Error): void {
    this.opts.logger.error({ err: err.message }, 'captive portal: request failed');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('internal error\n');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.opts.hooks.userActivity();
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/') return this.page(res, 200);
    if (req.method === 'POST' && path === '/') {
      const body = await readBody(req);
      if (body === undefined) {
        res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
        res.end(`request body over ${PORTAL_MAX_BODY} bytes\n`);
        // Read and drop the rest, so that the client gets the answer rather than a reset; requestTimeout bounds it.
        req.resume();
        return;
      }
      let sub: ReturnType<typeof checkSubmission>;
      try {
        sub = checkSubmission(new URLSearchParams(body), this.opts.credentialsFile);
      } catch (err) {
        if (err instanceof NetworkInputError || err instanceof PortalInputError) return this.page(res, 400, err.message);
        throw err;
      }
      if (sub.credentials && (await holdsOfflineConfig(this.opts.credentialsFile)))
        return this.page(res, 400, `credentials: this machine runs from the offline config ${this.opts.credentialsFile}, which they would replace`);
      if (sub.credentials) {
        await writeFileDurable(this.opts.credentialsFile, sub.credentials, 0o600);
        this.opts.logger.info({ file: this.opts.credentialsFile }, 'captive portal: machine credentials saved');
      }
      const credentialsSaved = !!sub.credentials;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>${escape(this.opts.title)}</title><p id="done">Saved. The machine is joining ${escape(sub.ssid)}; this hotspot will close.</p>`,
      );
      void this.opts.hooks
        .submitNetwork(sub.ssid, sub.psk)
        .catch((err: Error) => this.opts.logger.error({ err: err.message }, 'captive portal: joining failed'))
        .then(() => credentialsSaved && this.opts.hooks.credentialsSaved?.());
      return;
    }
    // Captive-portal checks (generate_204, hotspot-detect.html, ...) land here and are sent to the form.
    res.writeHead(302, { location: '/' });
    res.end();
  }

  private async page(res: ServerResponse, status: number, error?: string): Promise<void> {
    const nets = (await this.opts.hooks.listNetworks().catch(() => [])).sort((a, b) => b.signal - a.signal);
    const options = nets.map((n) => `<option value="${escape(n.ssid)}">${escape(n.ssid)} (${n.signal}%, ${n.security})</option>`).join('');
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><meta name="viewport" content="width=device-width"><title>${escape(this.opts.title)}</title>
<h1>${escape(this.opts.title)}</h1>${error ? `<p id="error" role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/">
<label>Network <input name="ssid" list="networks" required></label><datalist id="networks">${options}</datalist>
<label>Password <input name="password" type="password"></label>
<label>Machine credentials (optional JSON) <textarea name="credentials"></textarea></label>
<button type="submit">Connect</button>
</form>`);
  }
}

export async function holdsOfflineConfig(file: string): Promise<boolean> {
  try {
    const doc = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return !!doc && typeof doc === 'object' && 'agent' in doc;
  } catch {
    return false;
  }
}

/** The body as text, or undefined when it is larger than PORTAL_MAX_BODY. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > PORTAL_MAX_BODY) return resolve(undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > PORTAL_MAX_BODY) {
        req.removeAllListeners('data');
        chunks.length = 0;
        resolve(undefined);
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
