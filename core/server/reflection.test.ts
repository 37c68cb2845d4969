// Reflection on platform-server lists exactly the services it serves: never the cloud's.
import test from 'ava';
import { listServices } from './testing/reflection.js';
import { spawnRuntime } from './testing/spawn-runtime.js';

test('reflection lists RobotService, the resource APIs and the LAN SignalingService, and none of the cloud services', async (t) => {
  const runtime = await spawnRuntime({ components: [] });
  t.teardown(() => runtime.stop());
  const names = await listServices(runtime.address);
  t.deepEqual(names.filter((n) => n.startsWith('platform.')).sort(), [
    'platform.component.board.v1.BoardService',
    'platform.component.camera.v1.CameraService',
    'platform.component.encoder.v1.EncoderService',
    'platform.component.motor.v1.MotorService',
    'platform.component.sensor.v1.SensorService',
    'platform.robot.v1.RobotService',
    // -webrtc (default true): the machine answers WebRTC offers signaled on its own port.
    'platform.rpc.webrtc.v1.SignalingService',
    'platform.service.datamanager.v1.DataManagerService',
    'platform.service.mlmodel.v1.MLModelService',
    'platform.service.vision.v1.VisionService',
  ]);
  t.false(
    names.some((n) => /DataService|DataSyncService|DatasetService|MLTrainingService|AuthService|AgentDeviceService|DataPipelinesService/.test(n)),
    names.join(', '),
  );
});
