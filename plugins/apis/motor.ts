import type { Resource } from '../contract.js';
import { defineApi } from '../api.js';
import { callOf, tabular } from '../capture.js';
import type { ApiDeclaration } from './declaration.js';

export const MOTOR_API = defineApi<Motor>('core:component:motor');

export interface MotorProperties {
  /** True when the motor knows its position (it has an encoder). */
  positionReporting: boolean;
}

export interface PowerState {
  isOn: boolean;
  /** The signed power last applied, from -1 to 1. */
  powerPct: number;
}

/** A motor. Powers are fractions from -1 (full reverse) to 1 (full forward); positions are revolutions. */
export interface Motor extends Resource {
  setPower(powerPct: number): Promise<void> | void;
  /** Resolves when the motor has turned `revolutions` (negative rpm or revolutions turn backward). */
  goFor(rpm: number, revolutions: number): Promise<void> | void;
  /** Resolves when the motor is at `positionRevolutions` from its zero position. */
  goTo(rpm: number, positionRevolutions: number): Promise<void> | void;
  setRPM(rpm: number): Promise<void> | void;
  /** Makes the current position read as `offset` revolutions. */
  resetZeroPosition(offset: number): Promise<void> | void;
  getPosition(): Promise<number> | number;
  getProperties(): Promise<MotorProperties> | MotorProperties;
  stop(): Promise<void> | void;
  isPowered(): Promise<PowerState> | PowerState;
  isMoving(): Promise<boolean> | boolean;
}

export const MOTOR_DECLARATION: ApiDeclaration = {
  api: MOTOR_API,
  actuation: { stop: 'stop', commands: new Set(['setPower', 'goFor', 'goTo', 'setRPM']) },
  capture: {
    Position: { kind: 'tabular', calls: () => callOf('getPosition'), shape: ([position]) => tabular({ position }) },
    IsPowered: {
      kind: 'tabular',
      calls: () => callOf('isPowered'),
      shape: ([value]) => {
        const state = value as PowerState;
        return tabular({ is_on: state.isOn, power_pct: state.powerPct });
      },
    },
  },
};
