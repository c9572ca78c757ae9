// npm run build:genesis: the prepared genesis every local stack loads (harness/deployment/genesis.ts). Run it after
// the contracts change (npm run build:contracts) or anvil is upgraded; commit the six files it writes.
import { loadCircuitManifest } from "../../harness/deployment/index.ts";
import { loadFixtures } from "../../harness/deployment/index.ts";
import { buildGenesis, genesisFiles } from "../../harness/deployment/index.ts";

const fixtures = await loadFixtures((reason) => process.stdout.write(`contracts ${reason}: compiling\n`));
const circuit = await loadCircuitManifest();
// One per proof system: real Groth16 (JoinSplitVerifier) and dev proofs (DevVerifier).
for (const proofs of ["groth16", "dev"] as const) {
  const genesis = await buildGenesis(fixtures, circuit, proofs);
  const files = genesisFiles(proofs);
  process.stdout.write(`${proofs}: Pool ${genesis.pool} deployed in block ${genesis.deploymentBlock}\nwrote ${files.state}\nwrote ${files.info}\nwrote ${files.manifest}\n`);
}
