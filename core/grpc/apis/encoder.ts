import { ENCODER_API, type PositionType } from '../../../plugins/apis/encoder.js';
import * as pb from '../../../gen/platform/component/encoder/v1/encoder.js';
import { requireName, type ApiAdapter, type ResourceAccess } from '../api-adapter.js';
import { invalidArgument } from '../../serving/status-error.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

const encoder = (access: ResourceAccess, name: string | undefined) => access.resource(requireName(name), ENCODER_API);

function positionType(type: pb.PositionType): PositionType | undefined {
  switch (type) {
    case pb.PositionType.POSITION_TYPE_UNSPECIFIED:
      return undefined;
    case pb.PositionType.POSITION_TYPE_TICKS_COUNT:
      return 'ticks';
    case pb.PositionType.POSITION_TYPE_ANGLE_DEGREES:
      return 'degrees';
    default:
      throw invalidArgument(`position_type ${type}: unknown`);
  }
}

export const encoderAdapter: ApiAdapter = {
  serviceName: 'platform.component.encoder.v1.EncoderService',
  definition: pb.EncoderServiceService,
  implementation: (access): pb.EncoderServiceServer => ({
    getPosition: unary<pb.GetPositionRequest, pb.GetPositionResponse>(async (r) => {
      const position = await encoder(access, r.name).getPosition(positionType(r.positionType));
      return {
        value: position.value,
        positionType: position.type === 'degrees' ? pb.PositionType.POSITION_TYPE_ANGLE_DEGREES : pb.PositionType.POSITION_TYPE_TICKS_COUNT,
      };
    }),
    resetPosition: unary<pb.ResetPositionRequest, pb.ResetPositionResponse>(async (r) => {
      await encoder(access, r.name).resetPosition();
      return {};
    }),
    getProperties: unary<pb.GetPropertiesRequest, pb.GetPropertiesResponse>(async (r) => encoder(access, r.name).getProperties()),
    doCommand: doCommand(access, ENCODER_API),
  }),
};
