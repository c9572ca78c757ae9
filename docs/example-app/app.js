// The example app: a page that follows the queue runtime's client rules (the spec's rules 6 to 8 and
// §4.2) with an EIP-6963 wallet and viem, and nothing else. Its tests are in tests/.
import { createPublicClient, encodeFunctionData, erc20Abi, http, parseAbi } from "viem";

// The runtime's base URL: ?queue=… (the tests give their stack's), else `npx queue-devstack`'s.
const queue = new URL(location.href).searchParams.get("queue") ?? "http://127.0.0.1:8700";
const poolAbi = parseAbi(["function deposit(address asset, uint256 amount, uint256 precommitment, bytes encryptedOutput) returns (uint256)"]);
const $ = (id) => document.getElementById(id);
const say = (id, text) => ($(id).textContent = text);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const same = (a, b) => JSON.stringify(a).toLowerCase() === JSON.stringify(b).toLowerCase(); // addresses in any case

let reviewed; // the deployment this app was reviewed against (rule 6)
let config; // the runtime's current configuration, and its ETag
let etag;
let network; // the chain /networks lists for it
let chain; // reads, through the listed rpcUrl
let wallet; // the EIP-1193 provider the person chose, and their account
let account;
// Rule 8: every operation is stored with the chain and Pool it was made for, and its status route.
const journal = JSON.parse(localStorage.getItem("operations") ?? "[]");
const save = () => localStorage.setItem("operations", JSON.stringify(journal));

/** The fields of rule 6, as the served configuration states them (the shape of reviewed.json). */
function reviewOf(served) {
  const proof = served.queue.proof;
  const sha256 = (role) => proof.artifacts.find((artifact) => artifact.role === role)?.sha256;
  return {
    chainId: served.chainId, poolAddress: served.poolAddress, domain: served.domain, poolRuntimeCodeHash: served.poolRuntimeCodeHash,
    verifier: { address: proof.verifier.address, runtimeCodeHash: proof.verifier.runtimeCodeHash },
    verificationKeySha256: proof.verificationKeySha256, wasmSha256: sha256("wasm"), zkeySha256: sha256("zkey"), proofSystem: proof.system,
  };
}

/** Why nothing may be prepared now, or undefined. */
function refusal() {
  if (config === undefined) return "The runtime's configuration is not loaded.";
  const older = journal.filter((op) => !op.terminal && (op.chainId !== config.chainId || !same(op.poolAddress, config.poolAddress)));
  if (older.length > 0) return `Waiting: ${older.map((op) => op.id).join(", ")} of the previous deployment must settle first.`;
  const served = reviewOf(config);
  const differ = Object.keys(reviewed).filter((field) => !same(served[field], reviewed[field]));
  if (differ.length > 0) return `Refused: the runtime serves a deployment you have not reviewed (${differ.join(", ")} differ).`;
  if (network === undefined) return `Refused: the runtime lists no network for chain ${reviewed.chainId}.`;
  return undefined;
}

function render() {
  const reason = refusal();
  say("deployment", reason ?? `Deployment as reviewed: Pool ${config.poolAddress} on chain ${config.chainId}.`);
  $("deposit-button").disabled = $("check-files").disabled = reason !== undefined;
  $("operations").replaceChildren(...journal.map((op) => {
    const row = document.createElement("tr");
    for (const text of [op.id, op.kind, op.state]) row.insertCell().textContent = text; // text, never markup
    return row;
  }));
}

/** Reads the configuration (again, cheaply: 304 while unchanged) and the network it lists. */
async function loadConfig() {
  const response = await fetch(`${queue}/api/queue/config`, { headers: { accept: "application/json", ...(etag && { "if-none-match": etag }) } });
  if (response.status === 304) return;
  if (!response.ok) throw new Error(`GET /api/queue/config answered ${response.status}`);
  const previous = config;
  [config, etag] = [await response.json(), response.headers.get("etag")];
  const { supportedChains } = await (await fetch(`${queue}${config.queue.endpoints.networks}`, { headers: { accept: "application/json" } })).json();
  network = supportedChains.find((entry) => entry.chainId === reviewed.chainId && entry.chainId === config.chainId);
  if (network !== undefined) chain = createPublicClient({ transport: http(network.rpcUrl), pollingInterval: 250 });
  // Rule 8: a change while an operation is pending. That operation is followed at its own route first.
  const pending = journal.filter((op) => !op.terminal);
  if (previous !== undefined && !same(previous.poolAddress, config.poolAddress) && pending.length > 0) {
    say("notice", `The configuration changed while ${pending.map((op) => op.id).join(", ")} was pending: checking it before preparing anything else.`);
  }
}

async function keepConfig() {
  for (let failed = false; ; ) {
    try {
      await loadConfig();
      if (failed) say("notice", "");
      failed = false;
    } catch (error) {
      [config, etag, failed] = [undefined, undefined, true]; // a failed read (spec §7): say so, prepare nothing
      say("notice", `The runtime's configuration could not be read: ${error.message}`);
    }
    render();
    await sleep(1000);
  }
}

// The wallet, found by EIP-6963: one button per wallet announced.
window.addEventListener("eip6963:announceProvider", ({ detail }) => {
  const button = Object.assign(document.createElement("button"), { textContent: `Connect ${detail.info.name}` });
  button.onclick = () => connect(detail.provider);
  $("wallets").append(button);
});
window.dispatchEvent(new Event("eip6963:requestProvider"));

async function connect(provider) {
  try {
    [account] = await provider.request({ method: "eth_requestAccounts" });
    wallet = provider;
    provider.on("accountsChanged", (accounts) => ([account] = accounts, showWallet()));
    provider.on("chainChanged", showWallet);
    await showWallet();
  } catch (error) {
    say("wallet", error.code === 4001 ? "You declined the connection in your wallet." : `Could not connect: ${error.message}`);
  }
}

/** §4.2: the wallet must be on the listed chain before it is asked to sign anything. */
async function onListedChain() {
  if (network === undefined) return "The runtime's network is not known yet.";
  const chainId = await wallet.request({ method: "eth_chainId" });
  $("switch").hidden = chainId === network.chainIdHex;
  return chainId === network.chainIdHex ? undefined : `Your wallet is on chain ${chainId}: switch it to ${network.name} (${network.chainIdHex}) first.`;
}

async function showWallet() {
  if (account === undefined) return say("wallet", "Not connected.");
  say("wallet", (await onListedChain()) ?? `Connected ${account} on ${network.chainIdHex}.`);
}

$("switch").onclick = async () => {
  try {
    await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: network.chainIdHex }] });
  } catch (error) {
    if (error.code !== 4902) throw error;
    await wallet.request({ method: "wallet_addEthereumChain", params: [network.addEthereumChainParameter] }); // a wallet without the chain
  }
};

/** Asks the wallet to send, then waits for the block: each step shows. */
async function send(what, to, data) {
  say("deposit", `${what}: confirm in your wallet…`);
  const hash = await wallet.request({ method: "eth_sendTransaction", params: [{ from: account, to, data }] });
  say("deposit", `${what}: sent ${hash}, waiting for its block…`);
  const receipt = await chain.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${what} ${hash} reverted`);
  return receipt;
}

// A deposit needs no proof: an approval, then Pool.deposit. Its note's secrets stay with the recipient's
// wallet, which gives this page only the precommitment and the note encrypted to itself.
$("deposit-button").onclick = async () => {
  try {
    if (wallet === undefined) return say("deposit", "Connect a wallet first.");
    const reason = refusal() ?? (await onListedChain());
    if (reason !== undefined) return say("deposit", reason);
    const request = JSON.parse($("request").value);
    // Rule 7: the asset must be one of this deployment's, the Pool this configuration's.
    if (!config.assets.some((asset) => same(asset.address, request.asset))) return say("deposit", `${request.asset} is not an asset of this deployment.`);
    const [pool, amount] = [config.poolAddress, BigInt(request.amount)];
    const allowance = await chain.readContract({ address: request.asset, abi: erc20Abi, functionName: "allowance", args: [account, pool] });
    if (allowance < amount) await send("Approval", request.asset, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [pool, amount] }));
    const args = [request.asset, amount, BigInt(request.precommitment), request.encryptedOutput];
    const receipt = await send("Deposit", pool, encodeFunctionData({ abi: poolAbi, functionName: "deposit", args }));
    say("deposit", `Deposit confirmed in block ${receipt.blockNumber}.`);
  } catch (error) {
    say("deposit", error.code === 4001 ? "You rejected the request in your wallet." : `Deposit failed: ${error.shortMessage ?? error.message}`);
  }
};

// What an SDK does before proving: every proof file the configuration lists, checked against its hash.
$("check-files").onclick = async () => {
  say("files", "Checking the proof files…");
  try {
    const { artifacts } = config.queue.proof; // this configuration's, never an older one's (rule 7)
    for (const artifact of artifacts) {
      const bytes = await (await fetch(`${queue}${artifact.path}`)).arrayBuffer();
      const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((byte) => byte.toString(16).padStart(2, "0"));
      if (`0x${digest.join("")}` !== artifact.sha256) throw new Error(`${artifact.name} does not match its hash in the configuration: refusing to prove with it.`);
    }
    say("files", `${artifacts.length} proof files match the configuration's hashes.`);
  } catch (error) {
    say("files", error.message);
  }
};

/** Polls an operation's status route, as its Retry-After says, until it ends. */
async function follow(op) {
  while (!op.terminal) {
    const response = await fetch(op.statusUrl).catch(() => undefined); // unreachable: try again
    const status = response?.ok ? await response.json() : { state: `unknown (${response?.status ?? "no answer"})`, terminal: response?.status === 404 };
    [op.state, op.terminal] = [status.state, status.terminal];
    save();
    render();
    if (!op.terminal) await sleep(1000 * Number(response?.headers.get("retry-after") ?? 1));
  }
  if (!journal.some((other) => !other.terminal)) say("notice", "");
}

$("track").onsubmit = (event) => {
  event.preventDefault();
  const [id, kind] = [$("operation").value.trim(), $("kind").value];
  if (config === undefined || id === "" || journal.some((op) => op.id === id)) return;
  const route = config.queue.endpoints[kind === "send" ? "sendStatus" : "withdrawStatus"];
  const op = { id, kind, state: "…", chainId: config.chainId, poolAddress: config.poolAddress, statusUrl: `${queue}${route}?id=${encodeURIComponent(id)}` };
  journal.push(op);
  $("operation").value = "";
  void follow(op);
};

reviewed = await (await fetch("/reviewed.json")).json();
for (const op of journal) void follow(op); // a reload goes on following what it stored
void keepConfig();
