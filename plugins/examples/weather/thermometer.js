// The thermometer driver. It runs in the resource's own worker thread; `logger` lines carry the
// resource's logger name and this module's module_id, and are shown at the module's log_level.
export default async function thermometer({ name, attributes, logger }) {
  const started = Date.now();
  let calls = 0;
  let base = attributes.base_c;
  logger.debug('thermometer constructed', { base_c: base, drift_c: attributes.drift_c, unit: attributes.unit });
  return {
    getReadings() {
      calls++;
      const celsius = base + attributes.drift_c * Math.sin((Date.now() - started) / 60_000);
      const temperature = attributes.unit === 'fahrenheit' ? celsius * 1.8 + 32 : celsius;
      logger.debug('thermometer read', { call: calls, temperature });
      return { temperature: Math.round(temperature * 100) / 100, unit: attributes.unit, calls };
    },
    doCommand(command) {
      logger.debug('thermometer command', { command: Object.keys(command) });
      if (typeof command.set_base_c === 'number') {
        base = command.set_base_c;
        return { base_c: base };
      }
      // A driver bug, on request: the error escapes to the worker, which ends; the runtime rebuilds it.
      if (command.crash === true) {
        // Later than the reply, which must reach the caller before the worker ends.
        setTimeout(() => {
          throw new Error(`thermometer ${name} crashed on request`);
        }, 100);
        return { crashing: true };
      }
      return { calls, base_c: base };
    },
    close() {
      logger.debug('thermometer closed', { calls });
    },
  };
}
