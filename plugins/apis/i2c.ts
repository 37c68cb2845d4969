// I2C bus access that boards with an I2C controller offer to sensor drivers. Drivers reach the board
// through a dependency proxy in another thread, so the interface is register reads and writes by value
// (no bus handles cross threads); `i2cDevice` wraps it into a per-device object.
import type { Remote } from '../contract.js';

export interface I2C {
  /** Reads `length` bytes starting at `register` of the device at `address` (7-bit) on `bus`. */
  i2cReadRegister(bus: string, address: number, register: number, length: number): Promise<number[]> | number[];
  /** Writes `bytes` starting at `register` of the device at `address` on `bus`. */
  i2cWriteRegister(bus: string, address: number, register: number, bytes: number[]): Promise<void> | void;
}

export interface I2CDevice {
  readonly bus: string;
  readonly address: number;
  read(register: number, length: number): Promise<number[]>;
  readByte(register: number): Promise<number>;
  write(register: number, bytes: number[]): Promise<void>;
  writeByte(register: number, value: number): Promise<void>;
}

/** Checks the numbers every I2C transfer needs; throws a RangeError naming the field. */
export function checkI2CTransfer(address: number, register: number, bytes: number[] | number): void {
  if (!Number.isInteger(address) || address < 0x03 || address > 0x77) throw new RangeError(`address ${address}: must be a 7-bit I2C address from 0x03 to 0x77`);
  if (!Number.isInteger(register) || register < 0 || register > 0xff) throw new RangeError(`register ${register}: must be from 0 to 255`);
  if (typeof bytes === 'number') {
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > 32) throw new RangeError(`length ${bytes}: must be from 1 to 32 (SMBus block limit)`);
  } else if (bytes.length < 1 || bytes.length > 32 || bytes.some((b) => !Number.isInteger(b) || b < 0 || b > 0xff)) {
    throw new RangeError('bytes: must be 1 to 32 values from 0 to 255');
  }
}

/** A device on a board's bus, for sensor drivers: `const imu = i2cDevice(board, '1', 0x68)`. */
export function i2cDevice(board: Remote<I2C>, bus: string, address: number): I2CDevice {
  return {
    bus,
    address,
    read: (register, length) => board.i2cReadRegister(bus, address, register, length),
    readByte: async (register) => (await board.i2cReadRegister(bus, address, register, 1))[0]!,
    write: (register, bytes) => board.i2cWriteRegister(bus, address, register, bytes),
    writeByte: (register, value) => board.i2cWriteRegister(bus, address, register, [value]),
  };
}
