// The machine config that the conformance suite (core/micro/conformance.test.ts) runs on both runtimes:
// one resource of every model platform-micro-server supports, wired as a small robot (a gpio motor on
// the fake board with an incremental encoder, a motor on a fake encoder), and the data manager.
export function conformanceConfig(captureDir: string): Record<string, unknown> {
  return {
    // Port 0: each runtime picks its own free port, so that both read the very same file.
    network: { bind_address: '127.0.0.1:0', web_bind_address: '127.0.0.1:0' },
    components: [
      {
        name: 'board1',
        api: 'core:component:board',
        model: 'fake',
        attributes: {
          analogs: [{ name: 'pot', pin: '20', value: 512, min_range: 0, max_range: 5, step_size: 0.01 }],
          digital_interrupts: [
            { name: 'qa', pin: '40' },
            { name: 'qb', pin: '41' },
            { name: 'si', pin: '42' },
          ],
        },
      },
      { name: 'esp1', api: 'core:component:board', model: 'esp32', attributes: {} },
      { name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { celsius: 21.5, ok: true, label: 'lab' } } },
      { name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 32, height_px: 24, noise_mm: 0 } },
      { name: 'enc-q', api: 'core:component:encoder', model: 'incremental', attributes: { board: 'board1', pins: { a: 'qa', b: 'qb' } } },
      { name: 'enc-s', api: 'core:component:encoder', model: 'single', attributes: { board: 'board1', pins: { i: 'si' } } },
      { name: 'enc-f', api: 'core:component:encoder', model: 'fake', attributes: { ticks_per_rotation: 100, max_rpm: 100 } },
      { name: 'm1', api: 'core:component:motor', model: 'gpio', attributes: { board: 'board1', pins: { pwm: '1', dir: '2' }, max_rpm: 100 } },
      {
        name: 'mf',
        api: 'core:component:motor',
        model: 'gpio',
        attributes: { board: 'board1', pins: { a: '3', b: '4' }, encoder: 'enc-f', ticks_per_rotation: 100 },
      },
    ],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        attributes: { capture_dir: captureDir, capture_disabled: true, sync_disabled: true },
      },
    ],
  };
}
