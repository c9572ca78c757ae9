// The Pool's deployment: the compiled fixtures and proof files, the prepared genesis, deploying the
// fixtures or pinning an existing Pool, and the manifest that describes it. Parts: contracts, deployment.
export { contractsPart, deploymentPart, PersistedStateError, type Contracts } from "./parts.ts";
export { loadFixtures, inspectFixtures, buildFixtures, fixturesSourcesHash, COMPILED_PATH, FIXTURES_DIR, type CompiledFixtures } from "./fixtures.ts";
export { CIRCUIT_BUILD_DIR, loadCircuitManifest, renderSolidityVerifier } from "./circuit.ts";
export { buildGenesis, canonicalState, genesisFiles, genesisInputsHash, loadGenesis, GENESIS_CODE, GENESIS_PATH, GENESIS_STATE_PATH, GENESIS_TIMESTAMP } from "./genesis.ts";
export { isGenesisBlock } from "./genesis-blocks.ts";
export { deployFixtures, ACTION_ROUTES, ROUTE_KIND, DEFAULT_SWAP_PRICES, DEV_ASSETS, DEV_TOKEN_GRANT } from "./deploy.ts";
export { PinError } from "./pin.ts";
export { describeDeployment, manifestBytes, proofSection } from "./manifest.ts";
export { contractLayout, storageType, type ContractLayout, type SolcOutput, type StorageVariable } from "./contract-layout.ts";
export { FIXTURE_CONTRACTS, type CompiledContract, type FixtureName } from "./fixtures.ts";
export { FROM_SOURCE, PACKAGE_ROOT } from "./package-root.ts";
