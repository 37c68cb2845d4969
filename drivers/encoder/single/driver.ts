import { BOARD_API, type Board } from '../../../plugins/apis/board.js';
import type { Encoder } from '../../../plugins/apis/encoder.js';
import { defineDriver, type DriverLogger, type Remote } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { ticksPosition, TICKS_ONLY } from '../position-type.js';
import type { SingleEncoderAttributes } from './model.js';

const POLL_MS = 20;

export async function createSingleEncoder(attrs: SingleEncoderAttributes, board: Remote<Board>, logger: DriverLogger): Promise<Encoder & { close(): void }> {
  const interrupt = attrs.pins.i;
  let last = await board.getDigitalInterruptValue(interrupt);
  let position = 0;
  // Counts before any motor reports its power go forward; after a stop the shaft coasts the same way.
  let direction = 1;
  let syncing: Promise<void> | undefined;

  const sync = (): Promise<void> => {
    syncing ??= (async () => {
      const now = await board.getDigitalInterruptValue(interrupt);
      position += (now - last) * direction;
      last = now;
    })().finally(() => (syncing = undefined));
    return syncing;
  };
  const timer = setInterval(() => sync().catch((err: unknown) => logger.warn(`polling ${attrs.board}: ${(err as Error).message}`)), POLL_MS);

  return {
    async getPosition(type) {
      await sync();
      return ticksPosition(position, type);
    },
    async resetPosition() {
      await sync();
      position = 0;
    },
    getProperties: () => TICKS_ONLY,
    async motorPowerChanged(powerPct) {
      if (!Number.isFinite(powerPct)) throw invalidArgument(`power ${powerPct}: must be a number`);
      // Count what came so far in the old direction before turning.
      await sync();
      if (powerPct !== 0) direction = Math.sign(powerPct);
    },
    async doCommand(command) {
      if ('direction' in command) {
        const d = Number(command.direction);
        if (d !== 1 && d !== -1) throw invalidArgument('direction: must be 1 or -1');
        await sync();
        direction = d;
        return { direction };
      }
      throw invalidArgument('unknown command; the single encoder accepts {"direction": 1 | -1}');
    },
    close() {
      clearInterval(timer);
    },
  };
}

export default defineDriver<SingleEncoderAttributes, Encoder>(({ attributes, dependencies, logger }) =>
  createSingleEncoder(attributes, dependencies.get(BOARD_API, attributes.board), logger),
);
