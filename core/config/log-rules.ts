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

/**
 * The levels of a runtime's own loggers (platform.server, platform.session, ...) under a machine config:
 * its `log` rules apply to them as to resources, and the -debug flag or `debug: true` overrides. The
 * compiled rules are kept until the config changes. Before a config is loaded: debug or info.
 */
export class OwnLogLevels {
  private compiled?: { config: object; settings: LogSettings };

  constructor(
    private readonly debugFlag: boolean,
    private readonly config: () => { debug: boolean; log: { pattern: string; level: LevelName }[] } | undefined,
  ) {}

  levelOf(logger: string): LevelName {
    const config = this.config();
    if (!config) return this.debugFlag ? 'debug' : 'info';
    if (this.compiled?.config !== config) {
      const rules = config.log.map((r) => ({ pattern: compileLogPattern(r.pattern), level: r.level }));
      this.compiled = { config, settings: { debug: this.debugFlag || config.debug, rules } };
    }
    return levelFor(logger, this.compiled.settings);
  }
}
