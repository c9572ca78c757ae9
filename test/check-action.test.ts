import { describe, expect, it } from "vitest";
import { checkActionQuote, checkSimulatedAction } from "../src/admission/action-checks.ts";
import { DeploymentConfig, type ExternalActionRoute } from "../src/config/deployment-config.ts";
import { ProblemError } from "../src/problem.ts";
import type { Quote } from "../src/schemas/quote.ts";
import type { RelayRequest } from "../src/schemas/request.ts";

// The action's terms against its quote, term by term (no chain: a pure decision).
const A = "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707";
const B = "0x0165878A594ca255338adfa4d48449f69242Eb8F";
const ADAPTER = "0x8A791620dd6260079BF849Dc5567aDC3F2FdC318";
const ROUTE = `0x73776170${"0".repeat(56)}`;
const FILL = `0x6173796e63${"0".repeat(54)}`;
const route = { action: "external", id: ROUTE, name: "swap", kind: "sync", adapter: { address: ADAPTER } } as unknown as ExternalActionRoute;
const asyncRoute = { action: "external", id: FILL, name: "fill", kind: "async", adapter: { address: ADAPTER } } as unknown as ExternalActionRoute;
const config = { routes: [route, asyncRoute] } as unknown as DeploymentConfig;
const now = 1_800_000_000;

const quote: Quote = {
  quoteId: `qt_${"ab".repeat(32)}`, route: ROUTE, assetIn: A, assetOut: B, amountIn: "30000000",
  expectedOutput: "10000000000000000", minOutput: "9950000000000000", fees: { action: "10000", finalize: "100" },
  deadline: String(now + 600), expiresAt: new Date((now + 120) * 1000).toISOString(), relayer: A, signature: `0x${"11".repeat(65)}`,
  typedData: {
    domain: { name: "queue-devstack quote", version: "1", chainId: 11155111, verifyingContract: B },
    types: { Quote: [] },
    primaryType: "Quote",
    message: {
      configDomain: `0x${"22".repeat(32)}`, quoteId: `0x${"ab".repeat(32)}`, route: ROUTE, assetIn: A, assetOut: B, amountIn: "30000000",
      expectedOutput: "10000000000000000", minOutput: "9950000000000000", actionFee: "10000", finalizeFee: "100",
      deadline: String(now + 600), expiry: String(now + 120), relayer: A,
    },
  },
};

const request = (): RelayRequest =>
  ({
    publicInputs: { asset: A },
    extData: { recipient: ADAPTER, extAmount: "-30000000", fee: "10000" },
    action: { quoteId: quote.quoteId, routeId: ROUTE, outputAsset: B, minOutput: "9950000000000000", outputPrecommitment: "5", deadline: String(now + 600), finalizeFee: "100", finalizer: A },
  }) as unknown as RelayRequest;

const refusal = (r: RelayRequest, at = now, stored: unknown = quote) => {
  try {
    checkActionQuote(r, config, stored, at);
    return null;
  } catch (error) {
    return { code: (error as ProblemError).code, ...(error as ProblemError).extensions };
  }
};

describe("an action's terms against its quote", () => {
  it("accepts exactly the quoted terms (and a higher fee)", () => {
    expect(refusal(request())).toBeNull();
    const generous = request();
    generous.extData.fee = "20000";
    expect(refusal(generous)).toBeNull();
  });

  it("refuses each term that differs, naming it", () => {
    const changes: Array<[string, (r: RelayRequest) => void]> = [
      ["action.routeId", (r) => ((r.action as { routeId: string }).routeId = `0x66696c6c${"0".repeat(56)}`)],
      ["action.outputAsset", (r) => ((r.action as { outputAsset: string }).outputAsset = A)],
      ["action.minOutput", (r) => ((r.action as { minOutput: string }).minOutput = "1")],
      ["action.deadline", (r) => ((r.action as { deadline: string }).deadline = String(now + 601))],
      ["action.finalizeFee", (r) => ((r.action as { finalizeFee: string }).finalizeFee = "0")],
      ["action.finalizer", (r) => ((r.action as { finalizer: string }).finalizer = B)],
      ["publicInputs.asset", (r) => ((r.publicInputs as { asset: string }).asset = B)],
      ["-extData.extAmount", (r) => ((r.extData as { extAmount: string }).extAmount = "-29999999")],
      ["extData.recipient", (r) => ((r.extData as { recipient: string }).recipient = A)],
    ];
    for (const [field, change] of changes) {
      const r = request();
      change(r);
      // A route id the config lacks is refused as such before the terms are compared.
      expect(refusal(r), field).toMatchObject(field === "action.routeId" ? { code: "route_not_approved" } : { code: "quote_mismatch", field });
    }
  });

  it("refuses a fee below the quote's, an expired quote, and a quote it never made", () => {
    const cheap = request();
    cheap.extData.fee = "9999";
    expect(refusal(cheap)).toMatchObject({ code: "fee_too_low", minimumFee: "10000" });
    expect(refusal(request(), now + 121)).toMatchObject({ code: "quote_expired" });
    expect(refusal(request(), now, null)).toMatchObject({ code: "quote_mismatch" });
  });
});

describe("an action's simulated reservation", () => {
  // Pool.ReservationState: 1 Pending, 2 Settled, 3 Failed.
  const simulated = (routeId: string, state: number) => {
    const r = request();
    (r.action as { routeId: string }).routeId = routeId;
    try {
      checkSimulatedAction(r, config, state);
      return null;
    } catch (error) {
      return { code: (error as ProblemError).code, ...(error as ProblemError).extensions };
    }
  };

  it("a synchronous route's action that the simulation leaves Pending is not relayed; settled is", () => {
    expect(simulated(ROUTE, 1)).toMatchObject({ code: "simulation_failed", reservationState: "pending" });
    expect(simulated(ROUTE, 2)).toBeNull();
  });

  it("an action the simulation leaves Failed is not relayed, on either kind of route (issue 30, item 17): its fee would buy only a refund", () => {
    expect(simulated(ROUTE, 3)).toMatchObject({ code: "simulation_failed", reservationState: "failed" });
    expect(simulated(FILL, 3)).toMatchObject({ code: "simulation_failed", reservationState: "failed" });
  });

  it("an asynchronous route's action may stay Pending (its fill comes later, or its refund after the deadline)", () => {
    expect(simulated(FILL, 1)).toBeNull();
  });
});
