// os_auto_upgrade_type as apt configuration: 20auto-upgrades switches the periodic list update and
// unattended-upgrade on or off, and 50unattended-upgrades names the origins that may be upgraded. The
// origins are the ones apt itself knows (`apt-cache policy`), so custom repositories present when the
// setting is applied are included; `security` keeps only the origins whose codename contains "security".
export const AUTO_UPGRADES_FILE = '/etc/apt/apt.conf.d/20auto-upgrades';
export const UNATTENDED_UPGRADES_FILE = '/etc/apt/apt.conf.d/50unattended-upgrades';

export type AutoUpgradeType = 'all' | 'security' | 'disable';

export interface AptOrigin {
  origin: string;
  codename: string;
}

/**
 * The origins of `apt-cache policy` (no package argument): each `release` line's `o=` and `n=`. The
 * dpkg status file (`release a=now`) and releases without an origin or codename name nothing
 * unattended-upgrades could match, so they are skipped; duplicates (one per component) are merged.
 */
export function parseAptPolicyOrigins(policy: string): AptOrigin[] {
  const seen = new Map<string, AptOrigin>();
  for (const line of policy.split('\n')) {
    const m = /^\s+release\s+(.*)$/.exec(line);
    if (!m) continue;
    const fields = new Map<string, string>();
    // Values may contain commas only when escaped, which apt does not do; split on every comma.
    for (const part of m[1].split(',')) {
      const eq = part.indexOf('=');
      if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    const origin = fields.get('o');
    const codename = fields.get('n');
    if (!origin || !codename) continue;
    seen.set(`${origin}\0${codename}`, { origin, codename });
  }
  return [...seen.values()];
}

export function autoUpgradesFile(type: AutoUpgradeType): string {
  const on = type === 'disable' ? '0' : '1';
  return [
    '// Written by platform-agent (system_configuration.os_auto_upgrade_type); edits are overwritten.',
    `APT::Periodic::Update-Package-Lists "${on}";`,
    `APT::Periodic::Unattended-Upgrade "${on}";`,
    '',
  ].join('\n');
}

// An apt config string cannot hold a double quote, and unattended-upgrades splits a pattern on commas.
function patternValue(value: string): string {
  return value.replace(/["\\]/g, '').replace(/,/g, '\\,');
}

export function unattendedUpgradesFile(type: 'all' | 'security', origins: AptOrigin[]): string {
  const chosen = type === 'security' ? origins.filter((o) => o.codename.includes('security')) : origins;
  const patterns = chosen.map((o) => `\t"origin=${patternValue(o.origin)},codename=${patternValue(o.codename)}";`);
  return [
    `// Written by platform-agent (system_configuration.os_auto_upgrade_type = ${type}); edits are overwritten.`,
    'Unattended-Upgrade::Origins-Pattern {',
    ...patterns,
    '};',
    '',
  ].join('\n');
}
