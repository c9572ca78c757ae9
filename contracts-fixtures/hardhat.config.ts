import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig } from "hardhat/config";

// Compile offline with the npm `solc` package. Hardhat does not check that the file's version
// matches `version`, so package.json pins solc to exactly this version.
const require = createRequire(import.meta.url);
const here = import.meta.dirname;
export const SOLC_VERSION = "0.8.30";

export default defineConfig({
  solidity: {
    version: SOLC_VERSION,
    path: require.resolve("solc/soljson.js"),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Metadata hashes embed source paths and comments; dropping them keeps the bytecode (and so
      // poolRuntimeCodeHash) identical across machines and comment-only edits.
      metadata: { bytecodeHash: "none", appendCBOR: false },
      evmVersion: "cancun",
      // A patch (harness/patch) checks its code against the deployed contract's storage layout and
      // immutables: compiled.json keeps both, from this output.
      outputSelection: { "*": { "*": ["storageLayout"] } },
    },
  },
  // Hardhat takes the nearest package.json's folder as its root; keep everything inside contracts-fixtures/.
  paths: {
    sources: path.join(here, "contracts"),
    artifacts: path.join(here, "artifacts"),
    cache: path.join(here, "cache"),
    tests: path.join(here, "test"),
  },
});
