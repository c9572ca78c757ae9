import type { DeploymentConfig } from "../config/deployment-config.ts";
import type { RelaySettings } from "../config/relay-settings.ts";
import { hashActionExtData, hashExtData, publicAmountOf } from "../chain/ext-data.ts";
import { ProblemError } from "../problem.ts";
import type { OperationKind } from "../schemas/operation.ts";
import { toActionArg, type RelayRequest } from "../schemas/request.ts";
import type { OperationStore } from "../store/types.ts";
import type { CheckContext } from "./check-context.ts";
import { nullifierInFlight } from "./refusals.ts";

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A request's deployment reference must be this runtime's (spec rules 6 to 8): else 422 deployment_mismatch. */
export function checkDeploymentRef(config: DeploymentConfig, ref: { chainId: number; poolAddress: string; domain: string }): void {
  if (ref.chainId !== config.chainId || !same(ref.poolAddress, config.poolAddress) || ref.domain !== config.domain) {
    throw new ProblemError(
      "deployment_mismatch",
      `made for chain ${ref.chainId}, Pool ${ref.poolAddress}, domain ${ref.domain}; this runtime serves chain ${config.chainId}, Pool ${config.poolAddress}, domain ${config.domain}`,
      { extensions: { expected: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain } } },
    );
  }
}

/** Checks that need no chain: route, deployment, asset, binding of the public fields, fee, duplicates. */
export function checkRequest(kind: Exclude<OperationKind, "finalize">, request: RelayRequest, { config, relayer }: CheckContext): void {
  const { deployment, publicInputs, extData } = request;
  const extAmount = BigInt(extData.extAmount);
  if (kind === "send" && extAmount !== 0n) {
    throw new ProblemError("wrong_route", `a private send moves nothing out of the Pool (extAmount 0), this one has extAmount ${extAmount}: use withdraw-relay`);
  }
  if (kind === "withdraw" && extAmount >= 0n) {
    throw new ProblemError("wrong_route", `a withdrawal has a negative extAmount, this one has ${extAmount}: use send-relay`);
  }
  if (kind === "send" && request.action) {
    throw new ProblemError("wrong_route", "an external action is a withdrawal to the route's adapter: use withdraw-relay");
  }
  checkDeploymentRef(config, deployment);
  if (BigInt(publicInputs.domain) !== BigInt(config.domain)) {
    throw new ProblemError("deployment_mismatch", `publicInputs.domain is not this Pool's domain ${config.domain}`, {
      extensions: { expected: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain } },
    });
  }
  const asset = config.assets.find((a) => same(a.address, publicInputs.asset));
  if (!asset) throw new ProblemError("unsupported_asset", `asset ${publicInputs.asset} is not one of this Pool's funding assets`);

  const ext = { ...extData, extAmount, fee: BigInt(extData.fee) } as Parameters<typeof hashExtData>[2];
  const deploymentFields = { chainId: config.chainId, poolAddress: config.poolAddress, domain: BigInt(config.domain) };
  const expectedHash = request.action
    ? hashActionExtData(deploymentFields, asset.address, ext, toActionArg(request.action))
    : hashExtData(deploymentFields, asset.address, ext);
  if (BigInt(publicInputs.extDataHash) !== expectedHash) {
    throw new ProblemError("binding_mismatch", "publicInputs.extDataHash is not the hash of extData for this deployment: the execution fields are not the ones the proof was made for");
  }
  if (BigInt(publicInputs.publicAmount) !== publicAmountOf(extAmount, ext.fee)) {
    throw new ProblemError("binding_mismatch", "publicInputs.publicAmount is not extAmount - fee");
  }

  if (!same(extData.relayer, relayer)) {
    throw new ProblemError("relayer_mismatch", `the fee is paid to ${extData.relayer}; this runtime relays as ${relayer} (config relayFees.relayer)`);
  }
  // No fee entry is no relay, not a minimum of 0: a proof of nothing (dummy inputs, no outputs, no fee)
  // would otherwise make the relayer pay a transaction's gas for free.
  const schedule = config.relayFees.fees.find((f) => same(f.asset, asset.address));
  if (!schedule) throw new ProblemError("unsupported_asset", `this runtime relays nothing in ${asset.symbol} (${asset.address}): it has no relay fee for it`);
  // An action's fee is its quote's (checked with the quote); the schedule's is the floor of the others.
  const minimum = request.action ? 0n : BigInt(schedule[kind]);
  if (ext.fee < minimum) {
    throw new ProblemError("fee_too_low", `fee ${ext.fee} is below the relay fee ${minimum} for a ${kind} in ${asset.symbol}`, {
      extensions: { minimumFee: minimum.toString() },
    });
  }
  const [n0, n1] = publicInputs.inputNullifiers;
  if (n0 === n1) throw new ProblemError("duplicate_nullifier", `the request spends nullifier ${n0} twice`, { extensions: { nullifier: n0 } });
}

/** Room in the in-flight limit: in all (503 queue_full), and in the client's share of it, if known (429 too_many_in_flight). */
export function checkCapacity(store: OperationStore, settings: RelaySettings, client?: string): void {
  const live = store.countLive();
  if (live >= settings.maxLiveOperations) {
    throw new ProblemError("queue_full", `${live} operations are in flight, the limit is ${settings.maxLiveOperations}`, { headers: { "retry-after": "5" } });
  }
  if (client === undefined) return;
  const mine = store.countLive(client);
  if (mine >= settings.maxLivePerClient) {
    throw new ProblemError("too_many_in_flight", `this client has ${mine} operations in flight, its share of the queue is ${settings.maxLivePerClient}: wait for one to end`, {
      extensions: { limit: settings.maxLivePerClient },
      headers: { "retry-after": "5" },
    });
  }
}

export function checkInFlight(store: { liveHolder(nullifier: string): string | undefined }, claims: readonly string[]): void {
  for (const nullifier of claims) {
    const holder = store.liveHolder(nullifier);
    if (holder) throw nullifierInFlight(nullifier, holder);
  }
}

