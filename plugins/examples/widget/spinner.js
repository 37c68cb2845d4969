// The driver of acme:widget:spinner. Each WidgetService RPC arrives as the method of the same name in
// lower camel case, with the request as a plain object (fields in lowerCamelCase); it answers a plain
// object for the response message.
export default ({ attributes }) => {
  let total = 0;
  let spinning = false;
  return {
    spin({ turns }) {
      // A `code` among the platform's error codes becomes that gRPC status.
      if (!Number.isInteger(turns) || turns < 0)
        throw Object.assign(new Error(`turns ${turns}: must be a whole number, at least 0`), { code: 'INVALID_ARGUMENT' });
      total += turns;
      spinning = turns > 0;
      return { totalTurns: total };
    },
    getState() {
      return { totalTurns: total, color: attributes.color, spinning };
    },
    stop() {
      spinning = false;
      return {};
    },
  };
};
