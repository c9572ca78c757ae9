// Patching a deployed contract in place (issue 33): its runtime code replaced with anvil_setCode, storage,
// address and balance kept, after its storage layout and immutables are checked against the deployed
// contract's own. The manifest, the runtime, stack.json and the health follow. Part: patches.
export { patchPart } from "./parts.ts";
export { createPatcher, loadPatchRecords, type Patcher, type PatchResult } from "./patcher.ts";
export { patchRoutes } from "./routes.ts";
export { PatchError, type PatchRefusal } from "./errors.ts";
export { PATCHES_FILE, PatchRecord, PatchRecords } from "./records.ts";
export { readPatchSource, PATCH_SOLC_SETTINGS } from "./source.ts";
export { foundryProfile, solidityProject, type SolidityProject } from "./project.ts";
