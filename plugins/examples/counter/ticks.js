// The ticks driver: a reading returns the count so far, then adds `step`.
export default function ticks({ attributes, logger }) {
  let count = 0;
  logger.debug('ticks constructed', { step: attributes.step });
  return {
    getReadings() {
      const reading = { count };
      count += attributes.step;
      logger.debug('ticks read', { count: reading.count });
      return reading;
    },
  };
}
