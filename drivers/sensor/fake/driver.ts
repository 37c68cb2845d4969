import type { Sensor } from '../../../plugins/apis/sensor.js';
import { defineDriver } from '../../../plugins/contract.js';
import type { FakeSensorAttributes } from './model.js';

export default defineDriver<FakeSensorAttributes, Sensor>(({ attributes, logger }) => {
  let calls = 0;
  logger.debug('fake sensor constructed', { readings: Object.keys(attributes.readings) });
  return {
    getReadings() {
      calls++;
      const readings: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(attributes.readings)) {
        readings[key] = typeof value === 'number' && attributes.noise ? value + (Math.random() * 2 - 1) * attributes.noise : value;
      }
      if (attributes.count_calls) readings.count = calls;
      return readings;
    },
    doCommand(command) {
      // `crash` ends the worker the way a driver bug would, for tests and for trying out isolation.
      if (command.crash === true) setImmediate(() => { throw new Error('fake sensor crashed on request'); });
      if (command.sleep_ms !== undefined) {
        const ms = Number(command.sleep_ms);
        return new Promise((resolve) => setTimeout(() => resolve({ slept_ms: ms }), ms));
      }
      return { echo: command, calls };
    },
  };
});
