import type { FastifyInstance } from "fastify";
import { QUEUE_PATHS } from "../../src/paths.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import type { ChainEntry } from "../../src/config/networks.ts";
import { esc, hash } from "./view.ts";

// The Manifest panel: the configuration the queue URL serves, as GET /config answers it (its bytes and
// ETag), and its networks entry with an "add to wallet" button (the page's script calls the wallet).

export interface Served {
  config: DeploymentConfig;
  bytes: string;
  etag: string;
  networks: ChainEntry[];
}

/** Asks the served runtime its own routes: the same bytes and ETag a client gets. */
export async function servedManifest(runtime: FastifyInstance): Promise<Served> {
  const [config, networks] = await Promise.all([runtime.inject({ method: "GET", url: QUEUE_PATHS.config }), runtime.inject({ method: "GET", url: QUEUE_PATHS.networks })]);
  if (config.statusCode !== 200) throw new Error(`GET config answered ${config.statusCode}`);
  return {
    config: config.json() as DeploymentConfig,
    bytes: config.body,
    etag: String(config.headers.etag ?? ""),
    networks: networks.statusCode === 200 ? (networks.json() as { supportedChains: ChainEntry[] }).supportedChains : [],
  };
}

export function manifestHtml(served: Served, serving: string): string {
  const pretty = JSON.stringify(JSON.parse(served.bytes), null, 2);
  const chains = served.networks
    .map(
      (chain) =>
        `<li><strong>${esc(chain.name)}</strong> (chain id ${esc(chain.chainId)}), wallet RPC <code>${esc(chain.walletRpcUrl)}</code> ` +
        `<button type="button" class="add-chain" data-chain="${esc(JSON.stringify(chain.addEthereumChainParameter))}">add to wallet</button></li>`,
    )
    .join("");
  return (
    // The Pool and the ETag shortened, whole on hover and behind a copy button: whole, a phone broke them inside the word.
    `<dl><dt>serving</dt><dd>${esc(serving)}</dd><dt>Pool</dt><dd>${hash(served.config.poolAddress)}</dd><dt>ETag</dt><dd id="manifest-etag">${hash(served.etag)}</dd></dl>` +
    `<ul class="networks">${chains}</ul><p class="wallet-status" role="status"></p>` +
    `<details><summary>GET ${esc(QUEUE_PATHS.config)}</summary><pre id="manifest-json" tabindex="0">${esc(pretty)}</pre></details>`
  );
}
