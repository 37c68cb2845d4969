// The entrypoint of the acme:weather module. It receives the platform's SDK, so the module needs no
// dependencies of its own, and declares its models with the same defineModel as the built-in drivers.
export default ({ defineModule, defineModel, z }) =>
  defineModule({
    models: [
      defineModel({
        api: 'core:component:sensor',
        model: 'acme:weather:thermometer',
        description: 'A simulated thermometer whose temperature drifts around base_c.',
        attributes: z.strictObject({
          base_c: z.number({ error: 'must be a number' }).min(-80, 'must be at least -80').max(80, 'must be at most 80').default(20),
          drift_c: z.number({ error: 'must be a number' }).min(0, 'must be at least 0').default(0.5),
          unit: z.enum(['celsius', 'fahrenheit'], { error: 'must be celsius or fahrenheit' }).default('celsius'),
        }),
        driver: new URL('./thermometer.js', import.meta.url),
      }),
    ],
  });
