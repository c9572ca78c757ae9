import type { PublicClient } from "viem";
import type { DeploymentConfig } from "./config/deployment-config.ts";
import type { NetworkList } from "./config/networks.ts";
import type { LoadedArtifact } from "./proof-artifacts.ts";
import type { Relayer } from "./relay/relayer.ts";
import type { Quoter } from "./quote/quoter.ts";
import type { PatchedContract } from "./config/patched-contract.ts";

/** What every route group reads: decided once at start, immutable while the runtime runs (but for a harness's code change: src/code-change.ts). */
export interface RuntimeContext {
  /** The parsed manifest. */
  config: DeploymentConfig;
  /** The manifest file's exact bytes: GET /config serves these, so the file and the response are one. */
  configBytes: Buffer;
  configEtag: string;
  networks: NetworkList;
  /** Proof files by name, checked against the config at start and served from the files checked. */
  artifacts: ReadonlyMap<string, LoadedArtifact>;
  /** The relayer, when the runtime has a relayer key. */
  relayer: Relayer | null;
  /** Quotes external actions, signing with the relayer key (null without one). */
  quoter: Quoter | null;
  /** Reads the chain for requests (short timeouts). Its URL may carry credentials: never serve or log it. */
  chain: PublicClient;
  /** A request's chain reads, as a whole, answer within this, or the request is a 503 chain_unavailable. */
  chainTimeoutMs: number;
  /** Contracts a development harness patched in place (src/code-change.ts): empty unless it told the runtime so. */
  patched: PatchedContract[];
}
