// The one table of log levels: their names, and the numbers pino writes for them (which the runtime's
// JSON lines, the driver workers' filter and the agent's own log all use). In core/config/ (the names a
// config's log rules use), which the cloud may import: its trainer protocol accepts the same names.
export const LEVEL_NAMES = ['debug', 'info', 'warn', 'error'] as const;
export type LevelName = (typeof LEVEL_NAMES)[number];

export const LEVEL_VALUES: Readonly<Record<LevelName, number>> = { debug: 20, info: 30, warn: 40, error: 50 };

export function isLevelName(value: unknown): value is LevelName {
  return typeof value === 'string' && (LEVEL_NAMES as readonly string[]).includes(value);
}
