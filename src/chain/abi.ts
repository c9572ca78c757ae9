import { parseAbi } from "viem";

/** The parts of the Pool the runtime reads. The full ABI ships with the fixtures. */
export const poolReadAbi = parseAbi([
  "function domain() view returns (uint256)",
  "function verifier() view returns (address)",
  "function accountRegistry() view returns (address)",
  "function receiveDirectory() view returns (address)",
  "function supportedAssets() view returns (address[])",
  "function isSupportedAsset(address) view returns (bool)",
  "function levels() view returns (uint32)",
]);

/** The Pool's action routes and reservations (approved external actions). */
export const actionReadAbi = parseAbi([
  "function routes(bytes32 routeId) view returns (address adapter, bytes32 codeHash, uint8 kind)",
  "function FINALIZE_GRACE() view returns (uint256)",
  "function reservations(bytes32 reservationId) view returns (bytes32 routeId, address inputAsset, uint256 amountIn, address outputAsset, uint256 minOutput, uint256 precommitment, uint64 deadline, uint256 finalizeFee, uint256 amountOut, address adapter, uint8 state, address finalizer)",
  "event RouteApproved(bytes32 indexed routeId, address adapter, bytes32 codeHash, uint8 kind)",
  "event RouteRevoked(bytes32 indexed routeId)",
]);

/** The Pool's verifier: JoinSplitVerifier (Groth16) or DevVerifier (dev proofs), the same call. */
export const verifierAbi = parseAbi([
  "function verifyProof(uint256[2] a, uint256[2][2] b, uint256[2] c, uint256[9] publicSignals) view returns (bool)",
]);

/** Pool.RouteKind, as the Pool registered each route when it approved it. */
export const ROUTE_KINDS = ["sync", "async"] as const;

/** What the runtime asks an action route's adapter. */
export const adapterAbi = parseAbi([
  "function quote(address assetIn, address assetOut, uint256 amountIn) view returns (uint256)",
  "error PriceNotSet(address assetIn, address assetOut)",
]);
