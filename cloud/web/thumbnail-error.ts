// A thumbnail request that cannot be answered: the HTTP status and a message naming the rule. An entry of
// the cloud's error catalogue (cloud/errors/catalogue.ts), re-exported where the web port imports it.
export { ThumbnailError } from '../errors/catalogue.js';
