// The RPCs the page calls, by their gRPC paths, with the generated codecs (the same messages as every client).
import * as board from '../../gen/platform/component/board/v1/board.js';
import * as camera from '../../gen/platform/component/camera/v1/camera.js';
import * as encoder from '../../gen/platform/component/encoder/v1/encoder.js';
import * as motor from '../../gen/platform/component/motor/v1/motor.js';
import * as sensor from '../../gen/platform/component/sensor/v1/sensor.js';
import { DoCommandRequest, DoCommandResponse } from '../../gen/platform/robot/v1/common.js';
import * as robot from '../../gen/platform/robot/v1/robot.js';
import * as vision from '../../gen/platform/service/vision/v1/vision.js';
import { serverStream, unary, type Codec } from '../shared/grpc-web-client.js';

const rpc =
  <Req, Res>(service: string, method: string, req: Codec<Req>, res: Codec<Res>) =>
  (message: Partial<Req>, signal?: AbortSignal) =>
    unary(`/${service}/${method}`, req, res, message as object, {}, signal);

const ROBOT = 'platform.robot.v1.RobotService';
export const robotApi = {
  getMachineStatus: rpc(ROBOT, 'GetMachineStatus', robot.GetMachineStatusRequest, robot.GetMachineStatusResponse),
  getVersion: rpc(ROBOT, 'GetVersion', robot.GetVersionRequest, robot.GetVersionResponse),
  startSession: rpc(ROBOT, 'StartSession', robot.StartSessionRequest, robot.StartSessionResponse),
  sendSessionHeartbeat: rpc(ROBOT, 'SendSessionHeartbeat', robot.SendSessionHeartbeatRequest, robot.SendSessionHeartbeatResponse),
  stopAll: rpc(ROBOT, 'StopAll', robot.StopAllRequest, robot.StopAllResponse),
};

const MOTOR = 'platform.component.motor.v1.MotorService';
export const motorApi = {
  setPower: rpc(MOTOR, 'SetPower', motor.SetPowerRequest, motor.SetPowerResponse),
  goFor: rpc(MOTOR, 'GoFor', motor.GoForRequest, motor.GoForResponse),
  goTo: rpc(MOTOR, 'GoTo', motor.GoToRequest, motor.GoToResponse),
  stop: rpc(MOTOR, 'Stop', motor.StopRequest, motor.StopResponse),
  getPosition: rpc(MOTOR, 'GetPosition', motor.GetPositionRequest, motor.GetPositionResponse),
  isPowered: rpc(MOTOR, 'IsPowered', motor.IsPoweredRequest, motor.IsPoweredResponse),
};

const BOARD = 'platform.component.board.v1.BoardService';
export const boardApi = {
  setGpio: rpc(BOARD, 'SetGPIO', board.SetGPIORequest, board.SetGPIOResponse),
  getGpio: rpc(BOARD, 'GetGPIO', board.GetGPIORequest, board.GetGPIOResponse),
  setPwm: rpc(BOARD, 'SetPWM', board.SetPWMRequest, board.SetPWMResponse),
  pwm: rpc(BOARD, 'PWM', board.PWMRequest, board.PWMResponse),
  setPwmFrequency: rpc(BOARD, 'SetPWMFrequency', board.SetPWMFrequencyRequest, board.SetPWMFrequencyResponse),
  pwmFrequency: rpc(BOARD, 'PWMFrequency', board.PWMFrequencyRequest, board.PWMFrequencyResponse),
  readAnalogReader: rpc(BOARD, 'ReadAnalogReader', board.ReadAnalogReaderRequest, board.ReadAnalogReaderResponse),
  getDigitalInterruptValue: rpc(BOARD, 'GetDigitalInterruptValue', board.GetDigitalInterruptValueRequest, board.GetDigitalInterruptValueResponse),
};

export const sensorApi = {
  getReadings: rpc('platform.component.sensor.v1.SensorService', 'GetReadings', sensor.GetReadingsRequest, sensor.GetReadingsResponse),
};

const ENCODER = 'platform.component.encoder.v1.EncoderService';
export const encoderApi = {
  getPosition: rpc(ENCODER, 'GetPosition', encoder.GetPositionRequest, encoder.GetPositionResponse),
  resetPosition: rpc(ENCODER, 'ResetPosition', encoder.ResetPositionRequest, encoder.ResetPositionResponse),
};

export const cameraApi = {
  getImage: rpc('platform.component.camera.v1.CameraService', 'GetImage', camera.GetImageRequest, camera.GetImageResponse),
  getPointCloud: rpc('platform.component.camera.v1.CameraService', 'GetPointCloud', camera.GetPointCloudRequest, camera.GetPointCloudResponse),
  getProperties: rpc('platform.component.camera.v1.CameraService', 'GetProperties', camera.GetPropertiesRequest, camera.GetPropertiesResponse),
};

/** The gRPC service of a resource API subtype, e.g. motor -> platform.component.motor.v1.MotorService. */
export function serviceOf(type: string, subtype: string): string {
  return `platform.${type}.${subtype}.v1.${subtype[0].toUpperCase()}${subtype.slice(1)}Service`;
}

/** DoCommand exists on every resource API, so it is called on the resource's own service. */
export function doCommand(type: string, subtype: string, name: string, command: Record<string, unknown>) {
  return unary(`/${serviceOf(type, subtype)}/DoCommand`, DoCommandRequest, DoCommandResponse, { name, command });
}

export const configApi = {
  getConfig: rpc(ROBOT, 'GetConfig', robot.GetConfigRequest, robot.GetConfigResponse),
  saveConfig: rpc(ROBOT, 'SaveConfig', robot.SaveConfigRequest, robot.SaveConfigResponse),
};

/** Follows the runtime's log lines (RobotService.StreamLogs); see logs-view.tsx. */
export function streamLogs(request: Partial<robot.StreamLogsRequest>, onLines: (lines: robot.LogLine[]) => void, signal: AbortSignal): Promise<void> {
  return serverStream(`/${ROBOT}/StreamLogs`, robot.StreamLogsRequest, robot.StreamLogsResponse, request, (r) => onLines(r.lines), signal);
}

const VISION = 'platform.service.vision.v1.VisionService';
export const visionApi = {
  getDetections: rpc(VISION, 'GetDetections', vision.GetDetectionsRequest, vision.GetDetectionsResponse),
  getClassifications: rpc(VISION, 'GetClassifications', vision.GetClassificationsRequest, vision.GetClassificationsResponse),
  getObjectPointClouds: rpc(VISION, 'GetObjectPointClouds', vision.GetObjectPointCloudsRequest, vision.GetObjectPointCloudsResponse),
};
