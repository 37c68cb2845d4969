// The entrypoint of the acme:widget module: a model of a new API, acme:component:widget, whose RPCs
// are in widget.proto (named in module.json `apis`).
export default ({ defineModule, defineModel, z }) =>
  defineModule({
    models: [
      defineModel({
        api: 'acme:component:widget',
        model: 'acme:widget:spinner',
        description: 'A widget that counts its turns.',
        attributes: z.strictObject({
          color: z.string({ error: 'must be a string' }).default('red'),
        }),
        driver: new URL('./spinner.js', import.meta.url),
      }),
    ],
  });
