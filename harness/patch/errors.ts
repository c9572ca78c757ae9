import type { DevProblemCode } from "../dev/problems/index.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

/** Why a patch was refused, in one line, with the stable code the dev route answers with; the stack is left as it was. */
export type PatchRefusal = Extract<DevProblemCode, "unknown_contract" | "patch_source_invalid" | "compile_failed" | "storage_layout_changed" | "immutable_changed" | "patch_base_unknown"> | "deployment_mismatch";

export class PatchError extends QueueDevstackError {
  override name = "PatchError";
  readonly code: PatchRefusal;
  constructor(code: PatchRefusal, message: string) {
    super(message.split("\n")[0] as string);
    this.code = code;
  }
}
