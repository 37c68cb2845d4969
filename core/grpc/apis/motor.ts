import { MOTOR_API } from '../../../plugins/apis/motor.js';
import * as pb from '../../../gen/platform/component/motor/v1/motor.js';
import { requireName, type ApiAdapter, type ResourceAccess } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

const motor = (access: ResourceAccess, name: string | undefined) => access.resource(requireName(name), MOTOR_API);

export const motorAdapter: ApiAdapter = {
  serviceName: 'platform.component.motor.v1.MotorService',
  definition: pb.MotorServiceService,
  implementation: (access): pb.MotorServiceServer => ({
    setPower: unary<pb.SetPowerRequest, pb.SetPowerResponse>(async (r) => {
      await motor(access, r.name).setPower(r.powerPct);
      return {};
    }),
    goFor: unary<pb.GoForRequest, pb.GoForResponse>(async (r) => {
      await motor(access, r.name).goFor(r.rpm, r.revolutions);
      return {};
    }),
    goTo: unary<pb.GoToRequest, pb.GoToResponse>(async (r) => {
      await motor(access, r.name).goTo(r.rpm, r.positionRevolutions);
      return {};
    }),
    setRpm: unary<pb.SetRPMRequest, pb.SetRPMResponse>(async (r) => {
      await motor(access, r.name).setRPM(r.rpm);
      return {};
    }),
    resetZeroPosition: unary<pb.ResetZeroPositionRequest, pb.ResetZeroPositionResponse>(async (r) => {
      await motor(access, r.name).resetZeroPosition(r.offset);
      return {};
    }),
    getPosition: unary<pb.GetPositionRequest, pb.GetPositionResponse>(async (r) => ({ position: await motor(access, r.name).getPosition() })),
    getProperties: unary<pb.GetPropertiesRequest, pb.GetPropertiesResponse>(async (r) => ({
      positionReporting: (await motor(access, r.name).getProperties()).positionReporting,
    })),
    stop: unary<pb.StopRequest, pb.StopResponse>(async (r) => {
      await motor(access, r.name).stop();
      return {};
    }),
    isPowered: unary<pb.IsPoweredRequest, pb.IsPoweredResponse>(async (r) => {
      const state = await motor(access, r.name).isPowered();
      return { isOn: state.isOn, powerPct: state.powerPct };
    }),
    isMoving: unary<pb.IsMovingRequest, pb.IsMovingResponse>(async (r) => ({ isMoving: await motor(access, r.name).isMoving() })),
    doCommand: doCommand(access, MOTOR_API),
  }),
};
