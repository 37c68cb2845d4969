// I2C on Linux boards through /dev/i2c-N with the optional i2c-bus package (loaded on first use).
import type { I2C } from '../../plugins/apis/i2c.js';
import { checkI2CTransfer } from '../../plugins/apis/i2c.js';
import { failedPrecondition, invalidArgument } from '../../plugins/errors.js';
import { loadOptional } from './optional-package.js';

/** The part of i2c-bus's promisified bus that we use. */
interface PromisifiedBus {
  readI2cBlock(address: number, command: number, length: number, buffer: Buffer): Promise<{ bytesRead: number; buffer: Buffer }>;
  writeI2cBlock(address: number, command: number, length: number, buffer: Buffer): Promise<{ bytesWritten: number }>;
  close(): Promise<void>;
}
interface I2cBusModule {
  openPromisified(busNumber: number): Promise<PromisifiedBus>;
}

export interface LinuxI2C extends I2C {
  close(): Promise<void>;
}

/** `buses` maps the bus names callers use to Linux bus numbers (/dev/i2c-<number>). */
export function linuxI2C(buses: Record<string, number>): LinuxI2C {
  const open = new Map<string, Promise<PromisifiedBus>>();
  const bus = (name: string) => {
    const number = buses[name];
    if (number === undefined)
      throw invalidArgument(`i2c bus ${JSON.stringify(name)}: not configured on this board (configured: ${Object.keys(buses).join(', ') || 'none'})`);
    let handle = open.get(name);
    if (!handle) {
      handle = loadOptional<I2cBusModule>('i2c-bus', 'Linux with I2C enabled (/dev/i2c-*)').then((m) =>
        m.openPromisified(number).catch((err: Error) => {
          throw failedPrecondition(`i2c bus ${JSON.stringify(name)}: cannot open /dev/i2c-${number} (${err.message}); is I2C enabled on this machine?`);
        }),
      );
      handle.catch(() => open.delete(name));
      open.set(name, handle);
    }
    return handle;
  };
  const check = (address: number, register: number, bytes: number[] | number) => {
    try {
      checkI2CTransfer(address, register, bytes);
    } catch (err) {
      throw invalidArgument(`i2c ${(err as Error).message}`);
    }
  };
  /** Bus I/O errors (no /dev/i2c-N, no permission, a device that does not answer) name the bus and device. */
  const transfer = async <R>(name: string, address: number, io: (b: PromisifiedBus) => Promise<R>): Promise<R> => {
    const handle = await bus(name);
    try {
      return await io(handle);
    } catch (err) {
      throw failedPrecondition(
        `i2c bus ${JSON.stringify(name)} (/dev/i2c-${buses[name]}) address ${address}: ${(err as Error).message}; is I2C enabled and the device connected?`,
      );
    }
  };
  return {
    async i2cReadRegister(name, address, register, length) {
      check(address, register, length);
      const { bytesRead, buffer } = await transfer(name, address, (b) => b.readI2cBlock(address, register, length, Buffer.alloc(length)));
      return [...buffer.subarray(0, bytesRead)];
    },
    async i2cWriteRegister(name, address, register, bytes) {
      check(address, register, bytes);
      await transfer(name, address, (b) => b.writeI2cBlock(address, register, bytes.length, Buffer.from(bytes)));
    },
    async close() {
      for (const handle of open.values()) await (await handle.catch(() => undefined))?.close();
      open.clear();
    },
  };
}
