// The entrypoint of the acme:counter module: one sensor model, declared through the SDK it receives.
export default ({ defineModule, defineModel, z }) =>
  defineModule({
    models: [
      defineModel({
        api: 'core:component:sensor',
        model: 'acme:counter:ticks',
        description: 'Counts its readings; each reading adds step to the count.',
        attributes: z.strictObject({
          step: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1').default(1),
        }),
        driver: new URL('./ticks.js', import.meta.url),
      }),
    ],
  });
