// One error base for src/ and harness/ (which re-exports it): a code, a short message, details and a docs link.
export { QueueDevstackError, ERROR_CODES_DOCS, type QueueDevstackErrorOptions } from "./base.ts";
