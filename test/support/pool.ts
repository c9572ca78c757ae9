import { erc20Abi, parseUnits, type Abi, type Address, type Hex, type TransactionReceipt } from "viem";
import type { DevStack } from "../../harness/index.ts";
import {
  createAccountKeys,
  deposit as depositNote,
  recipientOf,
  buildWitness,
  createProver,
  fetchProofFiles,
  findNotes,
  hashExtData,
  poolAbi,
  prepareTransaction,
  randomFieldElement,
  reviewedFrom,
  syncPool,
  toRelayRequest,
  type AccountKeys,
  type Deployment,
  type ExtData,
  type PreparedTransaction,
  type Prover,
  type TransactionRequest,
  type QueueClient,
} from "../../harness/client/index.ts";
import { publicAmountOf } from "../../src/chain/ext-data.ts";
import type { RelayRequest } from "../../src/schemas/request.ts";
import { clients } from "./chain.ts";
import { rpc } from "./rpc.ts";

/** Explicit: eth_estimateGas is wrong for snarkjs verifiers. */
export const GAS = 6_000_000n;

/** A stack's Pool seen from a client: deposit, sync, find notes, prove. Real chain, real proofs. */
export async function poolFixture(stack: DevStack) {
  const config = stack.manifest;
  const reviewed = reviewedFrom(config); // the harness's own manifest: reviewed by construction
  const prover: Prover = createProver(await fetchProofFiles(stack.queueUrl, config, reviewed), reviewed);
  const deployment: Deployment = { chainId: config.chainId, poolAddress: config.poolAddress, domain: BigInt(config.domain) };
  const asset = config.assets.find((a) => a.decimals === 6)?.address as Address;
  const levels = config.queue.proof.treeDepth;
  const user = (i: number) => clients(stack.rpcUrl, stack.accounts[i]?.privateKey as Hex);
  const usdc = (x: string) => parseUnits(x, 6);
  const sync = () => syncPool({ client: user(0).public, pool: deployment.poolAddress, fromBlock: BigInt(config.deploymentBlock), levels });

  /** Approves and deposits `amount` as a note for `keys`; returns the deposit's receipt. */
  async function deposit(from: number, keys: AccountKeys, amount: bigint): Promise<TransactionReceipt> {
    const { wallet, public: client } = user(from);
    return (await depositNote({ wallet, client, pool: deployment.poolAddress, asset, amount, to: recipientOf(keys) })).receipt;
  }

  /** Deposits `amount` for fresh keys and returns the spendable note. */
  async function fundedNote(from: number, keys: AccountKeys, amount: bigint) {
    await deposit(from, keys, amount);
    const state = await sync();
    const owned = findNotes(keys, state, deployment.domain).filter((n) => !n.spent);
    const note = owned.at(-1);
    if (!note) throw new Error("deposit not found");
    return { state, input: { note: note.note, leafIndex: note.leafIndex } };
  }

  /**
   * `count` one-unit deposits from dev account `from`, sent back to back (one approve, explicit nonces
   * and gas, nothing estimated), then every receipt awaited: each inserts a pair of leaves and a root.
   */
  async function depositBurst(from: number, count: number): Promise<TransactionReceipt[]> {
    const { wallet, public: client, account } = user(from);
    let nonce = await client.getTransactionCount({ address: account.address, blockTag: "pending" });
    const hashes: Hex[] = [
      await wallet.writeContract({ address: asset, abi: erc20Abi, functionName: "approve", args: [deployment.poolAddress, BigInt(count)], nonce: nonce++, gas: 100_000n }),
    ];
    for (let i = 0; i < count; i++) {
      const args = [asset, 1n, randomFieldElement(), "0x"] as const;
      hashes.push(await wallet.writeContract({ address: deployment.poolAddress, abi: poolAbi, functionName: "deposit", args, nonce: nonce++, gas: GAS }));
    }
    const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
    const failed = receipts.find((r) => r.status !== "success");
    if (failed) throw new Error(`deposit burst: ${failed.transactionHash} reverted`);
    return receipts.slice(1);
  }

  const prove = (request: Omit<TransactionRequest, "deployment" | "asset"> & Partial<Pick<TransactionRequest, "deployment" | "asset">>) =>
    prepareTransaction({ deployment, asset, prover, ...request });

  /**
   * A real proof whose execution fields are changed after the client's checks (a withdrawal to the
   * Pool, a fee above the withdrawn amount): what a client without those checks could send, so the Pool
   * must refuse it itself. The change must keep publicAmount (extAmount - fee), so the witness holds.
   */
  async function proveUnchecked(request: Omit<TransactionRequest, "deployment" | "asset">, change: Partial<ExtData>): Promise<PreparedTransaction> {
    const witness = buildWitness({ deployment, asset, ...request });
    const extData = { ...witness.extData, ...change };
    if (publicAmountOf(extData.extAmount, extData.fee) !== witness.publicInputs.publicAmount) throw new Error("the change must keep extAmount - fee");
    const extDataHash = hashExtData(deployment, asset, extData);
    const { proof } = await prover.prove({ ...witness.signals, extDataHash: extDataHash.toString() });
    return { proof, publicInputs: { ...witness.publicInputs, extDataHash }, extData };
  }

  /** A contract read as account 0 sees it; a token balance; the head's timestamp (the chain's clock, which tests move). */
  const read = (address: Address, contractAbi: Abi, functionName: string, args: unknown[] = []) => user(0).public.readContract({ address, abi: contractAbi, functionName, args } as never);
  const balanceOf = (token: Address, who: Address) => read(token, erc20Abi as Abi, "balanceOf", [who]) as Promise<bigint>;
  const chainTime = async () => BigInt((await rpc<{ timestamp: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false])).timestamp);

  return { config, reviewed, prover, deployment, asset, levels, user, usdc, sync, deposit, depositBurst, fundedNote, prove, proveUnchecked, read, balanceOf, chainTime };
}

type PoolFixture = Awaited<ReturnType<typeof poolFixture>>;

export interface FreshSend {
  /** The dev account that deposits the note. @defaultValue 2 */
  from?: number;
  /** The note's amount, in dUSDC. @defaultValue "3" */
  amount?: string;
  /** Pays the sender's own keys, not fresh ones. @defaultValue false */
  toSelf?: boolean;
}

/** A private send of a freshly deposited note, all of it but `fee` paid out, proven; not yet submitted. */
async function proveFreshSend(stack: Pick<DevStack, "relayer">, pool: PoolFixture, fee: bigint, { from = 2, amount = "3", toSelf = false }: FreshSend) {
  const keys = createAccountKeys();
  const { state, input } = await pool.fundedNote(from, keys, pool.usdc(amount));
  const to = recipientOf(toSelf ? keys : createAccountKeys());
  return (await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc(amount) - fee, to }], fee, relayer: stack.relayer.address })).transaction;
}

/** A private send of a freshly deposited 5 dUSDC note, proven against the served config, not yet submitted. */
export async function provenSend(stack: DevStack, pool: PoolFixture, queue: QueueClient, from: number) {
  const config = await queue.beforePrepare();
  const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
  return { config, transaction: await proveFreshSend(stack, pool, fee, { from, amount: "5" }) };
}

/** The body of POST send-relay for a fresh note's send at the stack manifest's fee, proven (a real relay request). */
export async function provenRequest(stack: Pick<DevStack, "manifest" | "relayer">, pool: PoolFixture, send: FreshSend = {}): Promise<RelayRequest> {
  const fee = BigInt(stack.manifest.relayFees.fees[0]?.send ?? "0");
  return toRelayRequest(stack.manifest, await proveFreshSend(stack, pool, fee, send));
}
