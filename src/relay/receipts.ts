import { formatTransactionReceipt, numberToHex, TransactionReceiptNotFoundError, type Hex, type PublicClient, type TransactionReceipt } from "viem";
import { isTransportError } from "../chain/transport-error.ts";
import type { OperationRecord } from "../store/types.ts";

/** How the watcher finds what was mined: the receipts of announced blocks, or each attempt's own. */
export class ReceiptFinder {
  private readonly chain: PublicClient;
  /** The node refused eth_getBlockReceipts: operations are found by nonce only. */
  private noBlockReceipts = false;

  constructor(chain: PublicClient) {
    this.chain = chain;
  }

  /**
   * The receipts of these blocks, by transaction hash (lowercase). A block the node cannot answer for (no
   * eth_getBlockReceipts, an outage) gives none: its operations are looked up by nonce, as without a
   * subscription.
   */
  async inBlocks(blocks: bigint[]): Promise<Map<string, TransactionReceipt>> {
    const byHash = new Map<string, TransactionReceipt>();
    if (this.noBlockReceipts) return byHash;
    const answers = await Promise.all(
      blocks.map(
        (n) =>
          this.chain.request({ method: "eth_getBlockReceipts", params: [numberToHex(n)] } as never).catch((error: unknown) => {
            // Refused rather than unanswered: a node without the method is not asked again.
            if (!isTransportError(error)) this.noBlockReceipts = true;
            return null;
          }) as Promise<unknown[] | null>,
      ),
    );
    for (const receipt of answers.flatMap((a) => (Array.isArray(a) ? a : []))) {
      const formatted = formatTransactionReceipt(receipt as never) as TransactionReceipt;
      byHash.set(formatted.transactionHash.toLowerCase(), formatted);
    }
    return byHash;
  }

  /** The receipt of the operation's latest mined attempt, if any. */
  async of(op: OperationRecord): Promise<TransactionReceipt | undefined> {
    for (const attempt of [...op.attempts].reverse()) {
      try {
        return await this.chain.getTransactionReceipt({ hash: attempt.hash as Hex });
      } catch (error) {
        // Only "no receipt" means not mined; any other failure aborts this tick (decided on the next).
        if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      }
    }
    return undefined;
  }
}
