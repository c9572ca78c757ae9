// Repro bundles: a stack's chain, manifest and operation store in one gzipped file (save), and a
// bundle read back as untrusted input (load): capped while it is decompressed, validated part by
// part, and written into the state dir only once every part has passed.
export { bundleBytes, saveBundle, unpackBundle } from "./bundle.ts";
export { BundleError, type BundleErrorParameters, type BundlePart } from "./bundle-error.ts";
export { gunzipBounded } from "./bounded-gunzip.ts";
// A bundle's stored attempts settled from its rows alone (tested without a chain).
export { settleAttempts } from "./store-check.ts";
