// Which level applies to a logger (SPEC.md "Limits"): `log` rules are processed top to bottom and the
// last matching one applies; a resource's own level (log_configuration, or its module's log_level)
// beats the rules; debug mode (-debug or `debug: true`) overrides everything. The default is info.
import type { LevelName } from './log-levels.js';

export { LEVEL_NAMES, type LevelName } from './log-levels.js';

export interface LogRule {
  pattern: RegExp;
  level: LevelName;
}

export interface LogSettings {
  debug: boolean;
  rules: readonly LogRule[];
}

export function levelFor(logger: string, settings: LogSettings, own?: LevelName): LevelName {
  if (settings.debug) return 'debug';
  if (own) return own;
  let level: LevelName = 'info';
  for (const rule of settings.rules) if (rule.pattern.test(logger)) level = rule.level;
  return level;
}

/**
 * Compiles a `log` rule pattern. Patterns are regular expressions over dotted logger names that must
 * match the whole name; a `*` that does not follow something it could repeat means "any run of
 * characters", so both `platform.components.*` and `*.motor.*` work as users expect.
 */
export function compileLogPattern(pattern: string): RegExp {
  const source = pattern.replace(/(^|[^.\\\])}*+?])\*/g, '$1.*');
  return new RegExp(`^(?:${source})$`);
}
