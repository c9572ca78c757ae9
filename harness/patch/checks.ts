import type { Hex } from "viem";
import type { ContractLayout, StorageVariable } from "../deployment/index.ts";
import { PatchError } from "./errors.ts";

const where = (v: StorageVariable) => `slot ${v.slot}${v.offset === 0 ? "" : ` offset ${v.offset}`}`;

/**
 * The new code reads the deployed storage as the deployed code wrote it: every deployed variable keeps
 * its slot, offset and type, in order. Appending after them is allowed. Refused naming the first that
 * moved, changed type, or is gone.
 */
export function checkStorage(deployed: readonly StorageVariable[], next: readonly StorageVariable[]): void {
  deployed.forEach((was, i) => {
    const now = next[i];
    if (now && now.label === was.label && now.slot === was.slot && now.offset === was.offset && now.type === was.type) return;
    const same = next.find((v) => v.label === was.label);
    const detail = !same
      ? `is gone (it was at ${where(was)}${now ? `, which ${now.label} now takes` : ""})`
      : same.slot !== was.slot || same.offset !== was.offset
        ? `moved from ${where(was)} to ${where(same)}`
        : same.type !== was.type
          ? `changed type from ${was.type} to ${same.type}`
          : `is no longer declared in the same order (${now ? `${now.label} comes before it` : "it comes later"})`;
    throw new PatchError("storage_layout_changed", `storage variable ${was.label} ${detail}: the deployed storage would be misread (appending new variables is allowed)`);
  });
}

/** An immutable's value in deployed code: the bytes at its first reference. */
function valueAt(code: Hex, ref: { start: number; length: number }): string {
  return code.slice(2 + ref.start * 2, 2 + (ref.start + ref.length) * 2);
}

/**
 * The new runtime code with the deployed immutables' values filled in (solc leaves them zero: the
 * constructor writes them). An immutable the new code drops (made a constant, say), adds (it would have
 * no value: the constructor never ran) or retypes is refused, naming it.
 */
export function fillImmutables(deployed: ContractLayout, deployedCode: Hex, next: ContractLayout): Hex {
  for (const [name, was] of Object.entries(deployed.immutables)) {
    const now = next.immutables[name];
    const value = valueAt(deployedCode, was.refs[0] as { start: number; length: number });
    if (!now) throw new PatchError("immutable_changed", `immutable ${name} is dropped by ${next.contractName} (deployed value 0x${value}): the patch would change its value`);
    if (now.type !== was.type) throw new PatchError("immutable_changed", `immutable ${name} changes type from ${was.type} to ${now.type}`);
  }
  const added = Object.keys(next.immutables).find((name) => !(name in deployed.immutables));
  if (added !== undefined) throw new PatchError("immutable_changed", `immutable ${added} is new in ${next.contractName}: the deployed contract has no value for it (its constructor never ran)`);
  let code = next.deployedBytecode.slice(2);
  for (const [name, now] of Object.entries(next.immutables)) {
    const value = valueAt(deployedCode, (deployed.immutables[name] as ContractLayout["immutables"][string]).refs[0] as { start: number; length: number });
    for (const ref of now.refs) code = code.slice(0, ref.start * 2) + value + code.slice((ref.start + ref.length) * 2);
  }
  return `0x${code}`;
}

/** Deployed code with its immutables' bytes zeroed: what solc's output for it reads. */
function withoutImmutables(code: Hex, layout: ContractLayout): string {
  let bare = code.slice(2).toLowerCase();
  for (const { refs } of Object.values(layout.immutables)) for (const ref of refs) bare = bare.slice(0, ref.start * 2) + "00".repeat(ref.length) + bare.slice((ref.start + ref.length) * 2);
  return bare;
}

/** Which known contract deployed code is (its code equal but for immutables' values), if any. */
export function identifyCode(code: Hex, known: readonly ContractLayout[]): ContractLayout | undefined {
  return known.find((layout) => layout.deployedBytecode.length === code.length && withoutImmutables(code, layout) === layout.deployedBytecode.slice(2).toLowerCase());
}
