// The journald drop-in that caps the journal's disk (SystemMaxUse) and memory (RuntimeMaxUse) use, from
// system_configuration.logging_journald_*_max_use_megabytes. -1 leaves that limit to journald's own
// default, so the key is omitted rather than written.
export const JOURNALD_DROP_IN = '/etc/systemd/journald.conf.d/90-platform-agent.conf';

export interface JournaldLimits {
  systemMaxUseMegabytes: number;
  runtimeMaxUseMegabytes: number;
}

export function journaldDropIn(limits: JournaldLimits): string {
  const lines = ['# Written by platform-agent (system_configuration); edits are overwritten.', '[Journal]'];
  if (limits.systemMaxUseMegabytes >= 0) lines.push(`SystemMaxUse=${limits.systemMaxUseMegabytes}M`);
  if (limits.runtimeMaxUseMegabytes >= 0) lines.push(`RuntimeMaxUse=${limits.runtimeMaxUseMegabytes}M`);
  return `${lines.join('\n')}\n`;
}
