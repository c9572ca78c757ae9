/** EIP-6963's provider info: how the app's wallet list names the test wallet. */
export interface WalletInfo {
  uuid: string;
  name: string;
  icon: string;
  rdns: string;
}

/** What the page script is given (serialized by Playwright into the page). */
export interface PageWalletSetup {
  info: WalletInfo;
  /** Also set `window.ethereum` (the legacy injection most apps still read). */
  windowEthereum: boolean;
  /** The binding that carries a request to the test process. */
  binding: string;
  /** The page function the test process calls to emit an event. */
  emitter: string;
}

/** One answer from the test process: a binding would lose an Error's `code`, so a refusal comes as data. */
export type WalletAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

type Listener = (value: unknown) => void;
interface PageGlobals {
  [name: string]: unknown;
  dispatchEvent(event: Event): boolean;
  addEventListener(type: string, listener: () => void): void;
}

/**
 * The test wallet's page side, run before the app's scripts in every document of the context
 * (context.addInitScript): an EIP-1193 provider whose every request goes to the test process, announced
 * by EIP-6963. Serialized into the page, so it refers to nothing outside itself. The keys never enter
 * the page.
 */
export function installPageWallet(setup: PageWalletSetup): void {
  const page = globalThis as unknown as PageGlobals;
  if (page[setup.emitter] !== undefined) return;
  const call = page[setup.binding] as (request: { method: string; params: unknown }) => Promise<WalletAnswer>;
  const listeners = new Map<string, Listener[]>();
  const toError = (data: { code: number; message: string; data?: unknown }) => Object.assign(new Error(data.message), { code: data.code, data: data.data });
  const provider = {
    isQueueDevstack: true,
    async request(args: { method?: unknown; params?: unknown }): Promise<unknown> {
      if (typeof args !== "object" || args === null || typeof args.method !== "string") throw toError({ code: -32602, message: "request() takes { method: string, params? }." });
      const answer = await call({ method: args.method, params: args.params ?? [] });
      if ("error" in answer) throw toError(answer.error);
      return answer.result;
    },
    on(event: string, listener: Listener) {
      listeners.set(event, [...(listeners.get(event) ?? []), listener]);
      return provider;
    },
    removeListener(event: string, listener: Listener) {
      listeners.set(event, (listeners.get(event) ?? []).filter((l) => l !== listener));
      return provider;
    },
    off(event: string, listener: Listener) {
      return provider.removeListener(event, listener);
    },
  };
  page[setup.emitter] = (event: string, value: unknown) => {
    const argument = event === "disconnect" ? toError(value as { code: number; message: string }) : value;
    for (const listener of listeners.get(event) ?? []) {
      try {
        listener(argument);
      } catch (error) {
        console.error(error);
      }
    }
  };
  const detail = Object.freeze({ info: Object.freeze({ ...setup.info }), provider });
  const announce = () => page.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
  page.addEventListener("eip6963:requestProvider", announce);
  announce();
  if (setup.windowEthereum) page.ethereum = provider;
  // EIP-1193's connect: the provider can serve its chain from now on.
  void call({ method: "eth_chainId", params: [] }).then((answer) => {
    if ("result" in answer) (page[setup.emitter] as (event: string, value: unknown) => void)("connect", { chainId: answer.result });
  });
}
