import { buildFixtures, COMPILED_PATH } from "../../harness/deployment/index.ts";
import { buildPatchVariants } from "../../test/support/patch-variants.ts";

// Compiles contracts-fixtures/ with Hardhat 3 and refreshes the committed compiled.json, then the
// patch tests' contract variants (test/fixtures/patch-variants.json).
const started = performance.now();
const compiled = await buildFixtures();
console.log(`compiled ${Object.keys(compiled.contracts).length} contracts with solc ${compiled.solcVersion} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(`wrote ${COMPILED_PATH} (sources ${compiled.sourcesHash.slice(0, 12)})`);
const variantsStarted = performance.now();
const variants = await buildPatchVariants();
console.log(`compiled the patch variants (${variants.contracts} contracts) in ${((performance.now() - variantsStarted) / 1000).toFixed(1)} s: wrote ${variants.path}`);
