// npm run bench:gofor — how long GoFor(60 rpm, 1 revolution) takes on a gpio motor with an encoder,
// against the anchor of the ideal time, 1 revolution / 60 rpm = 1.000 s, measured in the same run.
// The motor is the fake board's simulated motor (max_rpm 120, 200 ticks a turn, no inertia), with the
// incremental (quadrature) encoder, all in this thread: the figure is the controller's own, without
// the workers' message hops. Both with max_rpm known (first power guess) and without it (learned).
import { createFakeBoard } from '../../drivers/board/fake/driver.js';
import { fakeBoardAttributes } from '../../drivers/board/fake/model.js';
import { createIncrementalEncoder } from '../../drivers/encoder/incremental/driver.js';
import { createGpioMotor } from '../../drivers/motor/gpio/driver.js';
import { gpioMotorAttributes } from '../../drivers/motor/gpio/model.js';
import { inProcess, memoryLogger } from '../../drivers/motor/testing/in-process.js';
import type { Board } from '../../plugins/apis/board.js';
import type { Encoder } from '../../plugins/apis/encoder.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const IDEAL_S = 1;

async function measure(maxRpm: number | undefined): Promise<{ seconds: number[]; errors: number[] }> {
  const pins = { pwm: '12', dir: '16' };
  const board = createFakeBoard(
    fakeBoardAttributes.parse({
      digital_interrupts: [
        { name: 'ea', pin: '40' },
        { name: 'eb', pin: '41' },
      ],
      simulated_motors: [{ name: 'sim', pins, max_rpm: 120, ticks_per_rotation: 200, encoder_pins: { a: '40', b: '41' } }],
    }),
  );
  const remote = inProcess<Board>(board);
  const logger = memoryLogger();
  const encoder = await createIncrementalEncoder({ board: 'b', pins: { a: 'ea', b: 'eb' } }, remote, logger);
  const motor = await createGpioMotor({
    name: 'm',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins, encoder: 'e', ticks_per_rotation: 200, ...(maxRpm ? { max_rpm: maxRpm } : {}) }),
    board: remote,
    encoder: inProcess<Encoder>(encoder),
    logger,
  });
  const seconds: number[] = [];
  const errors: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const before = await motor.getPosition();
    const started = performance.now();
    await motor.goFor(60, 1);
    seconds.push((performance.now() - started) / 1000);
    errors.push((await motor.getPosition()) - before - 1);
    await new Promise((r) => setTimeout(r, 100));
  }
  await motor.close();
  encoder.close();
  board.close();
  return { seconds, errors };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`GoFor(60 rpm, 1 rev), ${RUNS} runs each; anchor: the ideal ${IDEAL_S.toFixed(3)} s`);
for (const [label, maxRpm] of [
  ['max_rpm 120 given', 120],
  ['max_rpm not given (learned)', undefined],
] as const) {
  const { seconds, errors } = await measure(maxRpm);
  const m = median(seconds);
  console.log(
    `${label.padEnd(30)} median ${m.toFixed(3)} s  (min ${Math.min(...seconds).toFixed(3)}, max ${Math.max(...seconds).toFixed(3)})  ratio to ideal ${(m / IDEAL_S).toFixed(2)}x  ` +
      `position error median ${median(errors.map(Math.abs)).toFixed(4)} rev, max ${Math.max(...errors.map(Math.abs)).toFixed(4)} rev`,
  );
}
