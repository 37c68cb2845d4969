import test from 'ava';
import { LedcAllocator } from './ledc.js';

test('esp32 PWM: 4 distinct frequencies, same frequency shares a timer, a fifth is an error', (t) => {
  const ledc = new LedcAllocator();
  ledc.assign('1', 10_000);
  ledc.assign('2', 10_000); // shares the 10 kHz timer
  ledc.assign('3', 800);
  ledc.assign('4', 1000);
  ledc.assign('5', 50);
  t.deepEqual(
    ledc.timersInUse().map((x) => x.frequency_hz),
    [50, 800, 1000, 10_000],
  );
  t.throws(() => ledc.assign('6', 2000), {
    message:
      'frequency_hz 2000 on pin 6: needs a fifth PWM timer; the esp32 has 4, all in use at 50, 800, 1000, 10000 Hz (pins at the same frequency share a timer)',
  });
  ledc.assign('6', 800); // an existing frequency is fine
  // Moving the only pin of a timer to a new frequency frees the old timer: allowed.
  ledc.assign('5', 2000);
  t.deepEqual(ledc.timersInUse().find((x) => x.frequency_hz === 2000)?.pins, ['5']);
  // Moving one of two pins sharing a timer would need a fifth.
  t.throws(() => ledc.assign('2', 3000), { message: /needs a fifth PWM timer/ });
  // Frequency 0 frees the channel and, with it, the timer.
  ledc.assign('5', 0);
  ledc.assign('2', 3000);
  t.deepEqual(
    ledc.timersInUse().map((x) => x.frequency_hz),
    [800, 1000, 3000, 10_000],
  );
});

test('esp32 PWM: 8 channels', (t) => {
  const ledc = new LedcAllocator();
  for (let pin = 0; pin < 8; pin++) ledc.assign(String(pin), 1000);
  t.throws(() => ledc.assign('8', 1000), { message: /pin 8: no free PWM channel; the esp32 has 8/ });
  ledc.assign('7', 0);
  t.notThrows(() => ledc.assign('8', 1000));
});

test('esp32 board: PWM without a frequency takes a channel at 1000 Hz; capabilities name the motor frequency', async (t) => {
  const { createEsp32Board } = await import('./driver.js');
  const { fakeBoardAttributes } = await import('../fake/model.js');
  const board = createEsp32Board(fakeBoardAttributes.parse({}));
  board.setPWM('9', 0.25);
  t.is(board.pwmFrequency('9'), 1000);
  t.deepEqual(board.capabilities!(), { kind: 'esp32', i2cBuses: [], motorPwmFrequencyHz: 10_000, pwmTimers: 4, pwmChannels: 8 });
  for (const [pin, hz] of [
    ['9', 40],
    ['1', 10],
    ['2', 20],
    ['3', 30],
  ] as const)
    board.setPWMFrequency(pin, hz);
  t.throws(() => board.setPWM('4', 0.5), { message: /frequency_hz 1000 on pin 4: needs a fifth PWM timer/ });
  t.notThrows(() => board.setPWM('4', 0)); // duty 0 needs no channel
  t.throws(() => board.doCommand!({ nope: 1 }), { message: /the esp32 board accepts pwm_timers/ });
  board.close();
});
