import { buildFixtures, COMPILED_PATH } from "../harness/deployment/index.ts";

// Compiles contracts-fixtures/ with Hardhat 3 and refreshes the committed compiled.json.
const started = performance.now();
const compiled = await buildFixtures();
console.log(`compiled ${Object.keys(compiled.contracts).length} contracts with solc ${compiled.solcVersion} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(`wrote ${COMPILED_PATH} (sources ${compiled.sourcesHash.slice(0, 12)})`);
