import { playwright } from "./playwright-test.ts";
import { numberToHex, type Hex } from "viem";
import { CHAIN_ID, type DevAccount } from "../index.ts";
import { errorData, ProviderError, refusal } from "./provider-errors.ts";
import { parseTypedData, signMessage, signTypedData, type StackChain, type TransactionRequest } from "./wallet-chain.ts";
import type { WalletAnswer } from "./wallet-page.ts";

/** A request the wallet holds for the test to answer, as a person's wallet holds a prompt. */
export interface PendingRequest {
  method: string;
  params: unknown[];
  /** The origin of the page that asked. */
  origin: string;
}

interface Held extends PendingRequest {
  run: () => Promise<unknown>;
  answer: (answer: WalletAnswer) => void;
}

/** What the wallet answered, in order: attached to a failing test's report. */
export interface WalletLogEntry {
  method: string;
  params: unknown[];
  answer: WalletAnswer;
}

export type EmitEvent = (event: "accountsChanged" | "chainChanged" | "connect" | "disconnect", value: unknown) => Promise<void>;

// eth_* methods that sign with a key the node does not have, or that the wallet does not offer.
const UNSUPPORTED = new Set(["eth_sign", "eth_signTransaction", "eth_signTypedData", "eth_signTypedData_v1", "eth_signTypedData_v3", "eth_subscribe", "eth_unsubscribe"]);
const FORWARDED = /^(eth|net|web3)_/;
/** How long approve() and reject() wait for a request to arrive (the app asks after a click, a little later). */
const ANSWER_WAIT_MS = 5_000;

/**
 * The test wallet, as a person holding the stack's dev accounts: it approves what the app asks unless
 * the test holds the requests, and the test moves it to another chain, another account, locks or
 * disconnects it. Development only: its keys are anvil's well-known ones, and it reaches only its
 * stack's chain.
 */
export class TestWallet {
  readonly #chain: StackChain;
  readonly #accounts: DevAccount[];
  readonly #emit: EmitEvent;
  #account: DevAccount;
  #chainId = CHAIN_ID;
  readonly #knownChains = new Set<number>([CHAIN_ID]);
  #permitted = false;
  #locked = false;
  #holding = false;
  readonly #held: Held[] = [];
  readonly #arrivals: Array<() => void> = [];
  readonly #log: WalletLogEntry[] = [];

  constructor(options: { chain: StackChain; accounts: DevAccount[]; account: number; emit: EmitEvent }) {
    this.#chain = options.chain;
    this.#accounts = options.accounts;
    this.#emit = options.emit;
    this.#account = this.#pick(options.account);
  }

  /** The selected account's address. */
  get address(): Hex {
    return this.#account.address;
  }

  /** The chain the wallet is on (the stack's, 11155111, unless the test moved it). */
  get chainId(): number {
    return this.#chainId;
  }

  /** What the wallet answered so far. */
  get log(): readonly WalletLogEntry[] {
    return this.#log;
  }

  /** From now on, requests that need the person's approval wait in `pending()` for approve() or reject(). */
  hold(): Promise<void> {
    return step("wallet: hold requests", async () => {
      this.#holding = true;
    });
  }

  /** Approve by default again (requests already held stay held). */
  release(): Promise<void> {
    return step("wallet: approve by default", async () => {
      this.#holding = false;
    });
  }

  /** The held requests, oldest first. */
  pending(): PendingRequest[] {
    return this.#held.map(({ method, params, origin }) => ({ method, params, origin }));
  }

  /** Approves the oldest held request (waiting up to 5 s for one to arrive) and returns what it answered. */
  async approve(): Promise<unknown> {
    const held = await this.#next("approve");
    return step(`wallet: approve ${held.method}`, async () => {
      try {
        const result = await held.run();
        held.answer({ result });
        return result;
      } catch (error) {
        held.answer({ error: errorData(error) });
        return undefined;
      }
    });
  }

  /** Rejects the oldest held request (waiting up to 5 s for one) as a person does: EIP-1193's 4001. */
  async reject(): Promise<void> {
    const held = await this.#next("reject");
    await step(`wallet: reject ${held.method}`, async () => held.answer({ error: refusal("userRejected").toData() }));
  }

  /**
   * Moves the wallet to another chain, as a person whose wallet is on mainnet (emits chainChanged). On a
   * chain other than its stack's, the wallet reaches no node: reads and sends answer 4901.
   */
  switchChain(chainId: number): Promise<void> {
    return step(`wallet: switch to chain ${chainId}`, async () => {
      this.#knownChains.add(chainId);
      await this.#moveTo(chainId);
    });
  }

  /** Selects dev account `index` of the stack's accounts (emits accountsChanged to a connected app). */
  use(index: number): Promise<void> {
    return step(`wallet: use account ${index}`, async () => {
      this.#account = this.#pick(index);
      if (this.#connected()) await this.#emit("accountsChanged", [this.#account.address]);
    });
  }

  /** Disconnects the site, as a person does in the wallet: no accounts, accountsChanged([]) and disconnect (4900). */
  disconnect(): Promise<void> {
    return step("wallet: disconnect the site", async () => {
      this.#permitted = false;
      await this.#emit("accountsChanged", []);
      await this.#emit("disconnect", refusal("disconnected").toData());
    });
  }

  /** Locks the wallet: no accounts, and signing refused (4100) until the app asks for accounts again and that is approved. */
  lock(): Promise<void> {
    return step("wallet: lock", async () => {
      const was = this.#connected();
      this.#locked = true;
      if (was) await this.#emit("accountsChanged", []);
    });
  }

  unlock(): Promise<void> {
    return step("wallet: unlock", async () => {
      this.#locked = false;
      if (this.#connected()) await this.#emit("accountsChanged", [this.#account.address]);
    });
  }

  /** Answers one request from the page. */
  async request(method: string, params: unknown, origin: string): Promise<WalletAnswer> {
    const list = Array.isArray(params) ? (params as unknown[]) : [params];
    let answer: WalletAnswer;
    try {
      answer = { result: await this.#answer(method, list, origin) };
    } catch (error) {
      answer = { error: errorData(error) };
    }
    this.#log.push({ method, params: list, answer });
    return answer;
  }

  /** The test ended: what is still held is answered 4900, so no page waits on it. */
  close(): void {
    for (const held of this.#held.splice(0)) held.answer({ error: refusal("disconnected", "The test ended.").toData() });
  }

  async #answer(method: string, params: unknown[], origin: string): Promise<unknown> {
    switch (method) {
      case "eth_chainId":
        return numberToHex(this.#chainId);
      case "net_version":
        return String(this.#chainId);
      case "eth_accounts":
        return this.#connected() ? [this.#account.address] : [];
      case "eth_requestAccounts":
        if (this.#connected()) return [this.#account.address];
        return this.#ask(method, params, origin, async () => (await this.#grant(), [this.#account.address]));
      case "wallet_requestPermissions":
        return this.#ask(method, params, origin, async () => (await this.#grant(), this.#permissions()));
      case "wallet_getPermissions":
        return this.#permitted ? this.#permissions() : [];
      case "wallet_revokePermissions":
        if (this.#permitted) {
          this.#permitted = false;
          await this.#emit("accountsChanged", []);
        }
        return null;
      case "wallet_switchEthereumChain":
        return this.#switchFromApp(method, params, origin);
      case "wallet_addEthereumChain":
        return this.#addFromApp(method, params, origin);
      case "personal_sign":
        this.#authorized(params[1]);
        return this.#ask(method, params, origin, () => signMessage(this.#authorized(params[1]), params[0]));
      case "eth_signTypedData_v4": {
        this.#authorized(params[0]);
        const typedData = parseTypedData(params[1]);
        const domainChain = typedData.domain?.chainId;
        if (domainChain !== undefined && Number(BigInt(domainChain as string | number)) !== this.#chainId)
          throw refusal("invalidParams", `The typed data's domain is for chain ${String(domainChain)}; the wallet is on chain ${this.#chainId}.`);
        return this.#ask(method, params, origin, () => signTypedData(this.#authorized(params[0]), typedData));
      }
      case "eth_sendTransaction": {
        const tx = (params[0] ?? {}) as TransactionRequest;
        this.#authorized(tx.from ?? this.#account.address);
        this.#onStackChain(method);
        return this.#ask(method, params, origin, () => (this.#onStackChain(method), this.#chain.sendTransaction(this.#authorized(tx.from ?? this.#account.address), tx)));
      }
    }
    if (UNSUPPORTED.has(method) || !FORWARDED.test(method)) throw refusal("unsupportedMethod", `(${method})`);
    this.#onStackChain(method);
    return this.#chain.forward(method, params);
  }

  async #switchFromApp(method: string, params: unknown[], origin: string): Promise<unknown> {
    const chainId = chainIdOf(params[0]);
    if (!this.#knownChains.has(chainId)) throw refusal("unrecognizedChain", `The test wallet knows chain ${CHAIN_ID} (its stack's) and the chains the test moved it to.`);
    if (chainId === this.#chainId) return null;
    return this.#ask(method, params, origin, async () => (await this.#moveTo(chainId), null));
  }

  async #addFromApp(method: string, params: unknown[], origin: string): Promise<unknown> {
    const chainId = chainIdOf(params[0]);
    // Only its stack's entry: an app that offers another RPC for the chain id (the real Sepolia's, say)
    // is told so, rather than "added" an address the wallet would never use.
    if (chainId !== CHAIN_ID || !this.#chain.isNamedBy((params[0] as { rpcUrls?: unknown }).rpcUrls))
      throw refusal("invalidParams", `The test wallet adds only its stack's chain (${numberToHex(CHAIN_ID)} at its stack's RPC, as /api/queue/networks gives it).`);
    // As wallets do, adding the chain offers to switch to it: one approval for both.
    return this.#ask(method, params, origin, async () => (await this.#moveTo(chainId), null));
  }

  /** Runs a request that needs the person: at once, as an approval step, or held for approve()/reject(). */
  #ask(method: string, params: unknown[], origin: string, run: () => Promise<unknown>): Promise<unknown> {
    if (!this.#holding) return step(`wallet: approves ${method} (from ${origin})`, run);
    return new Promise<unknown>((resolve, reject) => {
      this.#held.push({
        method,
        params,
        origin,
        run,
        answer: (answer) => ("result" in answer ? resolve(answer.result) : reject(new ProviderError(answer.error))),
      });
      this.#arrivals.splice(0).forEach((arrived) => arrived());
    });
  }

  async #next(verb: string): Promise<Held> {
    if (this.#held.length === 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`wallet.${verb}(): no request arrived in ${ANSWER_WAIT_MS} ms (is the wallet held? wallet.hold() first)`)), ANSWER_WAIT_MS);
        this.#arrivals.push(() => (clearTimeout(timer), resolve()));
      });
    }
    return this.#held.shift() as Held;
  }

  async #grant(): Promise<void> {
    const was = this.#connected();
    this.#permitted = true;
    this.#locked = false;
    if (!was) await this.#emit("accountsChanged", [this.#account.address]);
  }

  async #moveTo(chainId: number): Promise<void> {
    if (chainId === this.#chainId) return;
    this.#chainId = chainId;
    await this.#emit("chainChanged", numberToHex(chainId));
  }

  #permissions() {
    return [{ parentCapability: "eth_accounts", caveats: [{ type: "restrictReturnedAccounts", value: [this.#account.address] }] }];
  }

  #connected(): boolean {
    return this.#permitted && !this.#locked;
  }

  /** The selected account, if the app may use it and names it. */
  #authorized(address: unknown): DevAccount {
    if (!this.#connected()) throw refusal("unauthorized", "Ask for accounts first (eth_requestAccounts).");
    if (typeof address !== "string" || address.toLowerCase() !== this.#account.address.toLowerCase()) throw refusal("unauthorized", `The wallet's account is ${this.#account.address}.`);
    return this.#account;
  }

  #onStackChain(method: string): void {
    if (this.#chainId !== CHAIN_ID) throw refusal("chainDisconnected", `The test wallet is on chain ${this.#chainId} and reaches only its stack's chain (${CHAIN_ID}): ${method} is not sent.`);
  }

  #pick(index: number): DevAccount {
    const account = this.#accounts[index];
    if (account === undefined) throw new RangeError(`the stack has dev accounts 0 to ${this.#accounts.length - 1}, not ${index}`);
    return account;
  }
}

function chainIdOf(parameter: unknown): number {
  const chainId = (parameter as { chainId?: unknown } | undefined)?.chainId;
  if (typeof chainId !== "string" || !/^0x[0-9a-fA-F]+$/.test(chainId)) throw refusal("invalidParams", "Expected [{ chainId: hex string }].");
  return Number(BigInt(chainId));
}

/** A named step in Playwright's trace, its errors pointing at the test's line. */
function step<T>(title: string, body: () => Promise<T>): Promise<T> {
  return playwright.test.step(title, body, { box: true });
}
