import { createPublicClient, formatUnits, http, parseAbi, parseAbiItem, type Address, type Hex, type PublicClient } from "viem";
import { readReservation } from "../../src/chain/reservation-tracker.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import type { RelayControl } from "../../src/relay/control.ts";
import { reservationIdOf as actionReservationIdOf } from "../../src/chain/ext-data.ts";
import type { OperationRecord } from "../../src/store/types.ts";
import { badge, esc, ether, hash, table, type AssetBook } from "./view.ts";

// The Pool panel and an action's reservation: read from the chain (anvil directly, never through the
// fault proxy) when a page asks or a change is pushed, never on a timer.

const treeAbi = parseAbi(["function nextIndex() view returns (uint32)", "function getLastRoot() view returns (uint256)", "function balanceOf(address) view returns (uint256)"]);
const newCommitment = parseAbiItem("event NewCommitment(uint256 commitment, uint256 index, bytes encryptedOutput)");
/** Roots listed by the block that made them; the rest are counted. */
const ROOTS_SHOWN = 5;
/** How far back the latest roots are looked for (the rest are counted, not listed). */
const ROOT_BLOCKS = 1_000n;
/** Reservations listed, newest first. */
const RESERVATIONS_SHOWN = 10;

export function chainReader(rpcUrl: string): PublicClient {
  // cacheTime 0: viem keeps the block number for seconds otherwise, and the panel must show the head it read.
  return createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }), cacheTime: 0 });
}

const root = (value: bigint) => hash(`0x${value.toString(16).padStart(64, "0")}`);

/** An action's reservation id (as its status answer names it), or null for another operation. */
export function reservationIdOf(op: OperationRecord): Hex | null {
  if ("reservationId" in op.request) return op.request.reservationId as Hex;
  return op.request.action ? actionReservationIdOf(op.request) : null;
}

/** Finalizes of one reservation listed (a refused one may be tried again). */
const FINALIZES_SHOWN = 5;

/** The finalize operations of a reservation, newest first (found by the store, not by reading them all). */
function finalizesOf(control: RelayControl, reservationId: string, after: string): OperationRecord[] {
  return control.newestFirst({ limit: FINALIZES_SHOWN, kind: "finalize", reservationId, since: after });
}

const opLink = (op: OperationRecord, withState = true) => `<a href="#op-${esc(op.id)}" data-op="${esc(op.id)}">${esc(op.id)}</a>${withState ? ` ${badge(op.state)}` : ""}`;

/** An operation's reservation: its state on the Pool and, for an action, the finalizes of it. */
export async function reservationHtml(client: PublicClient, control: RelayControl, op: OperationRecord): Promise<string> {
  const id = reservationIdOf(op);
  if (!id) return "no reservation";
  const pool = op.request.deployment.poolAddress as Address;
  const read = await readReservation(client, pool, id).catch((error: unknown) => new Error((error as Error).message));
  const state = read instanceof Error ? `<span class="failure">not read: ${esc(read.message.split("\n")[0])}</span>` : badge(read.state);
  if (op.kind === "finalize") {
    // The action is found by its output note's precommitment, which the Pool keeps in the reservation (an index of the store's).
    const actions = read instanceof Error ? [] : control.minedActions(read.precommitment.toString()).filter((a) => reservationIdOf(a)?.toLowerCase() === id.toLowerCase());
    return `reservation ${hash(id)} ${state}${actions.length ? `, of the action ${actions.map((a) => opLink(a)).join(", ")}` : ""}`;
  }
  const finalizes = finalizesOf(control, id, op.createdAt);
  return `reservation ${hash(id)} ${state}, ${finalizes.length ? `finalized by ${finalizes.map((f) => opLink(f)).join(", ")}` : "no finalize yet"}`;
}

/** The Pool panel: its tree, roots, balances and fees per asset, reservations and proof files. */
export async function poolHtml(client: PublicClient, control: RelayControl | null, config: DeploymentConfig): Promise<string> {
  const pool = config.poolAddress as Address;
  const latest = await client.getBlockNumber();
  const fromBlock = latest - ROOT_BLOCKS > BigInt(config.deploymentBlock) ? latest - ROOT_BLOCKS : BigInt(config.deploymentBlock);
  const [leaves, lastRoot, logs, balances] = await Promise.all([
    client.readContract({ address: pool, abi: treeAbi, functionName: "nextIndex", blockNumber: latest }),
    client.readContract({ address: pool, abi: treeAbi, functionName: "getLastRoot", blockNumber: latest }),
    client.getLogs({ address: pool, event: newCommitment, fromBlock, toBlock: latest }),
    Promise.all(config.assets.map((asset) => client.readContract({ address: asset.address as Address, abi: treeAbi, functionName: "balanceOf", args: [pool], blockNumber: latest }))),
  ]);
  // Every root the tree has had stays valid (roots never expire): the empty tree's, then one per pair inserted.
  const rootCount = leaves / 2 + 1;
  const blocks = [...new Set(logs.map((log) => log.blockNumber))].slice(-ROOTS_SHOWN).reverse();
  const recent = await Promise.all(blocks.map(async (blockNumber) => ({ blockNumber, root: await client.readContract({ address: pool, abi: treeAbi, functionName: "getLastRoot", blockNumber }) })));
  const fees = new Map(config.relayFees.fees.map((fee) => [fee.asset.toLowerCase(), fee]));
  const byAddress = new Map(config.assets.map((asset) => [asset.address.toLowerCase(), asset]));
  const units = (assetAddress: string, value: string | bigint) => {
    const asset = byAddress.get(assetAddress.toLowerCase());
    return asset ? `${esc(formatUnits(BigInt(value), asset.decimals))} ${esc(asset.symbol)}` : `${esc(value)} (units of ${esc(assetAddress)})`;
  };
  const assets = config.assets
    .map((asset, i) => {
      const fee = fees.get(asset.address.toLowerCase());
      return `<tr><th scope="row">${esc(asset.symbol)}</th><td>${units(asset.address, balances[i] as bigint)}</td><td>${fee ? units(asset.address, fee.send) : "not relayed"}</td><td>${fee ? units(asset.address, fee.withdraw) : "not relayed"}</td></tr>`;
    })
    .join("");
  // An action's fee is paid in its input asset, a finalize's in its output asset: one row per route and asset.
  const routeNames = new Map(config.routes.flatMap((route) => (route.action === "external" ? [[route.id.toLowerCase(), `${route.name} (${route.kind})`] as const] : [])));
  const actionFees = config.relayFees.actions
    .map((fee) => `<tr><th scope="row">${esc(routeNames.get(fee.route.toLowerCase()) ?? fee.route)}</th><td>${esc(byAddress.get(fee.asset.toLowerCase())?.symbol ?? fee.asset)}</td><td>${units(fee.asset, fee.action)}</td><td>${units(fee.asset, fee.finalize)}</td></tr>`)
    .join("");

  const actions = control?.newestFirst({ limit: RESERVATIONS_SHOWN, kind: "withdraw", action: true }) ?? [];
  const reservations = await Promise.all(
    actions.map(async (op) => {
      const id = reservationIdOf(op) as Hex;
      const read = await readReservation(client, op.request.deployment.poolAddress as Address, id).catch(() => null);
      const finalize = control ? finalizesOf(control, id, op.createdAt)[0] : undefined;
      return `<tr><td>${hash(id)}</td><td>${read ? badge(read.state) : "not read"}</td><td>${opLink(op, false)}</td><td>${finalize ? opLink(finalize, false) : "—"}</td></tr>`;
    }),
  );
  const artifacts = config.queue.proof.artifacts
    .map((a) => `<tr><th scope="row"><a href="${esc(a.path)}">${esc(a.name)}</a></th><td>${esc(a.role)}</td><td>${esc(a.size.toLocaleString("en"))} B</td><td>${hash(a.sha256)}</td></tr>`)
    .join("");
  return (
    `<dl><dt>Pool</dt><dd>${hash(pool)}</dd><dt>at block</dt><dd>${esc(latest)}</dd><dt>leaves</dt><dd id="pool-leaves">${esc(leaves)}</dd><dt>last root</dt><dd>${root(lastRoot)}</dd>` +
    `<dt>roots a proof may use</dt><dd>all <span id="pool-roots">${esc(rootCount)}</span> the tree has had (roots never expire)</dd></dl>` +
    (recent.length ? table(`latest roots, by the block that made them (last ${ROOT_BLOCKS} blocks)`, ["block", "root"], recent.map((r) => `<tr><td>${esc(r.blockNumber)}</td><td>${root(r.root)}</td></tr>`).join("")) : "") +
    table("per asset: the Pool's balance and the relay fees", ["asset", "Pool balance", "send fee", "withdraw fee"], assets) +
    (actionFees ? table("per route and asset: the action and finalize fees a quote sets", ["route", "asset", "action fee", "finalize fee"], actionFees) : "") +
    table(`reservations (newest ${RESERVATIONS_SHOWN} actions)`, ["reservation", "state", "action", "finalize"], reservations.join("") || `<tr><td colspan="4">no action yet</td></tr>`) +
    table("proof files", ["file", "role", "size", "sha256"], artifacts)
  );
}

/** The served deployment's assets by address, for amounts in their units. */
export const assetBookOf = (config: DeploymentConfig): AssetBook => new Map(config.assets.map((a) => [a.address.toLowerCase(), { symbol: a.symbol, decimals: a.decimals }]));

/**
 * The dev accounts (stack.accounts: anvil's funded accounts but the relayer's) and their balances, in ETH
 * and in each asset of the served deployment, read at one block.
 */
export async function accountsHtml(client: PublicClient, accounts: ReadonlyArray<{ address: Address; anvilIndex: number }>, config: DeploymentConfig): Promise<string> {
  const blockNumber = await client.getBlockNumber();
  const rows = await Promise.all(
    accounts.map(async ({ address, anvilIndex }, i) => {
      const [eth, ...tokens] = await Promise.all([
        client.getBalance({ address, blockNumber }),
        ...config.assets.map((asset) => client.readContract({ address: asset.address as Address, abi: treeAbi, functionName: "balanceOf", args: [address], blockNumber })),
      ]);
      const cells = config.assets.map((asset, j) => `<td>${esc(formatUnits(tokens[j] as bigint, asset.decimals))}</td>`).join("");
      return `<tr><th scope="row">${i} <span class="detail">(anvil #${anvilIndex})</span></th><td>${hash(address)}</td><td>${esc(ether(eth))}</td>${cells}</tr>`;
    }),
  );
  return (
    `<p class="detail">at block ${esc(blockNumber)}; <code>stack.accounts[i]</code>, <code>QUEUE_DEVSTACK_ACCOUNT_i_*</code>: anvil's funded accounts without the relayer's (anvil #1)</p>` +
    table("dev accounts and their balances", ["account", "address", "ETH", ...config.assets.map((a) => a.symbol)], rows.join(""))
  );
}
