import type { Sensor } from '../../../plugins/apis/sensor.js';
import { defineDriver } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import type { FakeSensorAttributes } from './model.js';

export default defineDriver<FakeSensorAttributes, Sensor>(({ attributes, logger }) => {
  let calls = 0;
  const readings: Record<string, unknown> = { ...attributes.readings };
  logger.debug('fake sensor constructed', { readings: Object.keys(attributes.readings) });
  return {
    getReadings() {
      calls++;
      const current: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(readings)) {
        current[key] = typeof value === 'number' && attributes.noise ? value + (Math.random() * 2 - 1) * attributes.noise : value;
      }
      if (attributes.count_calls) current.count = calls;
      return current;
    },
    doCommand(command) {
      // `set` changes readings at runtime, to simulate the world changing.
      if (command.set !== undefined) {
        if (command.set === null || typeof command.set !== 'object' || Array.isArray(command.set))
          throw invalidArgument('set: must be an object of reading names to values');
        Object.assign(readings, command.set);
        return { readings: { ...readings } };
      }
      // `crash` ends the worker the way a driver bug would (after the reply has gone), to try out isolation.
      if (command.crash === true)
        setTimeout(() => {
          throw new Error('fake sensor crashed on request');
        }, 100);
      if (command.sleep_ms !== undefined) {
        const ms = Number(command.sleep_ms);
        return new Promise((resolve) => setTimeout(() => resolve({ slept_ms: ms }), ms));
      }
      return { echo: command, calls };
    },
  };
});
