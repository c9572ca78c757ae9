// npm run build:genesis: the prepared genesis every local stack loads (harness/deployment/genesis.ts). Run it after
// the contracts change (npm run build:contracts) or anvil is upgraded; commit both files it writes.
import { loadCircuitManifest } from "../harness/deployment/index.ts";
import { loadFixtures } from "../harness/deployment/index.ts";
import { buildGenesis, GENESIS_PATH, GENESIS_STATE_PATH } from "../harness/deployment/index.ts";

const fixtures = await loadFixtures((reason) => process.stdout.write(`contracts ${reason}: compiling\n`));
const { levels } = await loadCircuitManifest();
const genesis = await buildGenesis(fixtures, levels);
process.stdout.write(`Pool ${genesis.pool} deployed in block ${genesis.deploymentBlock}\nwrote ${GENESIS_STATE_PATH}\nwrote ${GENESIS_PATH}\n`);
