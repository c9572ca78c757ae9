import { parseAbi } from "viem";

/** The parts of the Pool the runtime reads. The full ABI ships with the fixtures. */
export const poolReadAbi = parseAbi([
  "function domain() view returns (uint256)",
  "function verifier() view returns (address)",
  "function accountRegistry() view returns (address)",
  "function receiveDirectory() view returns (address)",
  "function supportedAssets() view returns (address[])",
  "function isSupportedAsset(address) view returns (bool)",
  "function levels() view returns (uint32)",
]);
