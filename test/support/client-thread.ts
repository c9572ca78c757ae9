// Runs in a worker thread (test/client-threads.test.ts), as a test file runs in vitest's threads pool:
// imports the client's door, then proves over the committed proof files and lets the thread end.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parentPort } from "node:worker_threads";
import { CIRCUIT_BUILD_DIR } from "../../harness/deployment/index.ts";

const client = await import("../../harness/client/index.ts");
parentPort?.postMessage({ imported: true });

const read = (file: string) => readFile(path.join(CIRCUIT_BUILD_DIR, file));
const files = { wasm: await read("joinsplit.wasm"), zkey: await read("joinsplit_final.zkey"), verificationKey: await read("verification_key.json") };
const pins = { wasmSha256: client.sha256Of(files.wasm), zkeySha256: client.sha256Of(files.zkey), verificationKeySha256: client.sha256Of(files.verificationKey) };
const prover = client.createProver(files, pins);
const deployment = { chainId: 11155111, poolAddress: "0x00000000000000000000000000000000000000aa" as const, domain: 1n };
const { signals, publicInputs } = client.buildWitness({ deployment, tree: new client.MerkleTree(24), keys: client.createAccountKeys(), asset: "0x00000000000000000000000000000000000000bb", inputs: [], outputs: [] });
const { publicSignals } = await prover.prove(signals);
await client.closeProvers(); // without it, snarkjs's worker threads would keep this thread alive
parentPort?.postMessage({ proved: publicSignals[0] === publicInputs.root });
