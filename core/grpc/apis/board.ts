import { BOARD_API } from '../../../plugins/apis/board.js';
import * as pb from '../../../gen/platform/component/board/v1/board.js';
import { requireName, type ApiAdapter, type ResourceAccess } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

const board = (access: ResourceAccess, name: string | undefined, field = 'name') => access.resource(requireName(name, field), BOARD_API);
const pin = (value: string) => requireName(value, 'pin');

export const boardAdapter: ApiAdapter = {
  serviceName: 'platform.component.board.v1.BoardService',
  definition: pb.BoardServiceService,
  implementation: (access): pb.BoardServiceServer => ({
    setGpio: unary<pb.SetGPIORequest, pb.SetGPIOResponse>(async (r) => {
      await board(access, r.name).setGPIO(pin(r.pin), r.high);
      return {};
    }),
    getGpio: unary<pb.GetGPIORequest, pb.GetGPIOResponse>(async (r) => ({ high: await board(access, r.name).getGPIO(pin(r.pin)) })),
    setPwm: unary<pb.SetPWMRequest, pb.SetPWMResponse>(async (r) => {
      await board(access, r.name).setPWM(pin(r.pin), r.dutyPct);
      return {};
    }),
    pwm: unary<pb.PWMRequest, pb.PWMResponse>(async (r) => ({ dutyPct: await board(access, r.name).pwm(pin(r.pin)) })),
    setPwmFrequency: unary<pb.SetPWMFrequencyRequest, pb.SetPWMFrequencyResponse>(async (r) => {
      await board(access, r.name).setPWMFrequency(pin(r.pin), r.frequencyHz);
      return {};
    }),
    pwmFrequency: unary<pb.PWMFrequencyRequest, pb.PWMFrequencyResponse>(async (r) => ({
      frequencyHz: await board(access, r.name).pwmFrequency(pin(r.pin)),
    })),
    readAnalogReader: unary<pb.ReadAnalogReaderRequest, pb.ReadAnalogReaderResponse>(async (r) =>
      board(access, r.boardName, 'board_name').readAnalogReader(requireName(r.analogReaderName, 'analog_reader_name')),
    ),
    getDigitalInterruptValue: unary<pb.GetDigitalInterruptValueRequest, pb.GetDigitalInterruptValueResponse>(async (r) => ({
      value: await board(access, r.boardName, 'board_name').getDigitalInterruptValue(requireName(r.digitalInterruptName, 'digital_interrupt_name')),
    })),
    doCommand: doCommand(access, BOARD_API),
  }),
};
