// The `session` section of the machine config: how long a session may go without a heartbeat before
// the runtime stops what it commanded. Bounded so that a typo can neither make every client time out
// on a busy network (below 30 ms) nor leave a runaway motor for minutes (above 1 minute).
import * as z from 'zod';
import { parseDurationMs } from './duration.js';

export const DEFAULT_HEARTBEAT_WINDOW = '2s';
export const MIN_HEARTBEAT_WINDOW_MS = 30;
export const MAX_HEARTBEAT_WINDOW_MS = 60_000;

const heartbeatWindow = z.string({ error: 'must be a duration string such as "2s" or "500ms"' }).superRefine((text, ctx) => {
  const ms = parseDurationMs(text);
  if (ms === undefined) ctx.addIssue({ code: 'custom', message: 'must be a duration such as "2s", "500ms" or "1m"' });
  else if (ms < MIN_HEARTBEAT_WINDOW_MS || ms > MAX_HEARTBEAT_WINDOW_MS) ctx.addIssue({ code: 'custom', message: 'must be between 30ms and 1m' });
});

export const sessionConfigSchema = z.strictObject({
  heartbeat_window: heartbeatWindow.default(DEFAULT_HEARTBEAT_WINDOW),
});

export type SessionConfig = z.output<typeof sessionConfigSchema>;

/** The configured window in milliseconds (the schema has already checked its shape and range). */
export const heartbeatWindowMs = (config: SessionConfig | undefined): number => parseDurationMs(config?.heartbeat_window ?? DEFAULT_HEARTBEAT_WINDOW)!;
