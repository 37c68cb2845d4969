import { SENSOR_API } from '../../../plugins/apis/sensor.js';
import {
  SensorServiceService,
  type GetReadingsRequest,
  type GetReadingsResponse,
  type SensorServiceServer,
} from '../../../gen/platform/component/sensor/v1/sensor.js';
import { requireName, type ApiAdapter } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

export const sensorAdapter: ApiAdapter = {
  serviceName: 'platform.component.sensor.v1.SensorService',
  definition: SensorServiceService,
  implementation: (access): SensorServiceServer => ({
    getReadings: unary<GetReadingsRequest, GetReadingsResponse>(async (request) => ({
      readings: await access.resource(requireName(request.name), SENSOR_API).getReadings(request.extra ?? {}),
    })),
    doCommand: doCommand(access, SENSOR_API),
  }),
};
