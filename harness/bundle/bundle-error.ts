import { QueueDevstackError, type QueueDevstackErrorOptions } from "../../src/errors/index.ts";

/** A bundle's part a refusal names; `stack`: its chain and manifest together, refused once started. */
export type BundlePart = "chain" | "manifest" | "store" | "patches" | "stack";

export interface BundleErrorParameters {
  /** What is refused: the bundle's file, or where it was to be loaded (a state dir, a store file). */
  file?: string;
  /** The bundle's part at fault, when one is. */
  part?: BundlePart;
  /** Why, in words (after the file, as "is not …" or "already holds …", when there is no part). */
  reason: string;
}

/** A bundle that cannot be saved or loaded: one line naming the file and the part, then why. */
export class BundleError extends QueueDevstackError {
  override name = "BundleError";
  readonly code = "bundle_refused";
  override readonly docsPath = "docs/bundles.md#errors";
  readonly file: string | undefined;
  readonly part: BundlePart | undefined;
  readonly reason: string;

  constructor({ file, part, reason }: BundleErrorParameters, options?: QueueDevstackErrorOptions) {
    super(file === undefined ? reason : part === undefined ? `${file} ${reason}` : `${file}: its ${REFUSED[part]}: ${reason}`, options);
    this.file = file;
    this.part = part;
    this.reason = reason;
  }
}

const REFUSED: Record<BundlePart, string> = {
  chain: "chain part is refused",
  manifest: "manifest part is refused",
  store: "store part is refused",
  patches: "patches part is refused",
  stack: "chain and manifest do not make a stack",
};
