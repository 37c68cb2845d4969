// Where full-time data capture writes, and how much it keeps.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$PLATFORM_FTDC_DIR`, or `~/.platform/diagnostics.data` next to the rest of the machine's state. */
export function ftdcDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.PLATFORM_FTDC_DIR || join(homedir(), '.platform', 'diagnostics.data');
}

// At one sample a second a sample is about 0.5 KB plus 0.1 KB per resource, so a 1 MB file holds
// half an hour or more, and 10 files (10 MB at most) a few hours: enough to look back at an incident
// without filling a small SD card.
export const FTDC_FILE_BYTES = 1024 * 1024;
export const FTDC_FILES = 10;
export const FTDC_INTERVAL_MS = 1000;
/** fsync every 30 samples: at most half a minute lost on a power cut, no disk flush every second. */
export const FTDC_SYNC_EVERY = 30;
