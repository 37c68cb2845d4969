import { BOARD_API, type Board } from '../../../plugins/apis/board.js';
import type { Encoder } from '../../../plugins/apis/encoder.js';
import { defineDriver, type DriverLogger, type Remote } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { ticksPosition, TICKS_ONLY } from '../position-type.js';
import { QuadratureDecoder } from '../quadrature.js';
import type { IncrementalEncoderAttributes } from './model.js';

/** The board keeps edges in a bounded buffer; polling this often keeps the encoder well inside it. */
const POLL_MS = 20;

export async function createIncrementalEncoder(
  attrs: IncrementalEncoderAttributes,
  board: Remote<Board>,
  logger: DriverLogger,
): Promise<Encoder & { close(): void }> {
  const { a, b } = attrs.pins;
  const decoder = new QuadratureDecoder();
  let cursor = -1;
  let zero = 0;
  let syncing: Promise<void> | undefined;

  const sync = (): Promise<void> => {
    syncing ??= (async () => {
      const result = await board.digitalInterruptEdges([a, b], cursor);
      if (cursor < 0 || result.lost) {
        if (result.lost) logger.warn('edges were lost (the encoder fell behind the board); the count may be off');
        decoder.init(result.levels[a] ?? false, result.levels[b] ?? false);
      } else {
        for (const edge of result.edges) decoder.edge(edge.interrupt === a ? 'a' : 'b', edge.high);
      }
      cursor = result.cursor;
    })().finally(() => (syncing = undefined));
    return syncing;
  };

  try {
    await sync();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UNIMPLEMENTED') {
      throw invalidArgument(`board ${JSON.stringify(attrs.board)}: does not report digital interrupt edges, which the incremental encoder needs`);
    }
    throw err;
  }
  const timer = setInterval(() => sync().catch((err: unknown) => logger.warn(`polling ${attrs.board}: ${(err as Error).message}`)), POLL_MS);

  return {
    async getPosition(type) {
      await sync();
      return ticksPosition(decoder.count - zero, type);
    },
    async resetPosition() {
      await sync();
      zero = decoder.count;
    },
    getProperties: () => TICKS_ONLY,
    doCommand(command) {
      if ('status' in command) return { count: decoder.count - zero, skipped_edges: decoder.skipped };
      throw invalidArgument('unknown command; the incremental encoder accepts {"status": {}}');
    },
    close() {
      clearInterval(timer);
    },
  };
}

export default defineDriver<IncrementalEncoderAttributes, Encoder>(({ attributes, dependencies, logger }) =>
  createIncrementalEncoder(attributes, dependencies.get(BOARD_API, attributes.board), logger),
);
