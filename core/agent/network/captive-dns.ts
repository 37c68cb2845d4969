// The captive portal's DNS redirect: NetworkManager's shared mode runs dnsmasq for the hotspot and reads
// the files in dnsmasq-shared.d. Every name resolves to the hotspot address, or with
// disable_captive_portal_redirect only names ending in `.setup` (so phones keep using mobile data).
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileDurable } from '../../serving/durable-file.js';

export const DNSMASQ_SHARED_FILE = '/etc/NetworkManager/dnsmasq-shared.d/90-platform-captive-portal.conf';
export const HOTSPOT_ADDRESS = '10.42.0.1';

export function captiveDnsConfig(disableRedirect: boolean): string {
  const rule = disableRedirect ? `address=/setup/${HOTSPOT_ADDRESS}` : `address=/#/${HOTSPOT_ADDRESS}`;
  return `# Written by platform-agent (network_configuration.disable_captive_portal_redirect); edits are overwritten.\n${rule}\n`;
}

/** Writes the drop-in under `root` ('' on a machine) when its content changes; true when it did. */
export async function writeCaptiveDns(root: string, disableRedirect: boolean): Promise<boolean> {
  const file = root ? join(root, DNSMASQ_SHARED_FILE) : DNSMASQ_SHARED_FILE;
  const content = captiveDnsConfig(disableRedirect);
  if ((await readFile(file, 'utf8').catch(() => undefined)) === content) return false;
  await mkdir(dirname(file), { recursive: true });
  await writeFileDurable(file, content, 0o644);
  return true;
}
