import { closeSync, fsync, openSync } from "node:fs";
import { StoreWriteError } from "./errors.ts";

/**
 * A store's WAL file, synced to disk on libuv's thread pool (off the main thread): callers at the same
 * moment share one sync. A failed sync is a StoreWriteError, told to `failed` as well.
 */
export class WalSync {
  private readonly fd: number;
  private readonly failed: (message: string) => void;
  /** flush() calls so far, and how many of them a finished sync covers. */
  private flushesAsked = 0;
  private flushesDone = 0;
  private syncing: Promise<void> | null = null;

  constructor(file: string, failed: (message: string) => void) {
    this.fd = openSync(file, "r");
    this.failed = failed;
  }

  flush(): Promise<void> {
    return this.syncFor(++this.flushesAsked);
  }

  /** Syncs until one sync that started after flush call `ticket` has finished: concurrent callers share syncs. */
  private async syncFor(ticket: number): Promise<void> {
    while (this.flushesDone < ticket) {
      if (!this.syncing) {
        const covers = this.flushesAsked;
        this.syncing = new Promise<void>((resolve, reject) => fsync(this.fd, (error) => (error ? reject(error) : resolve())))
          .then(() => void (this.flushesDone = Math.max(this.flushesDone, covers)))
          .catch((error: unknown) => {
            const refused = new StoreWriteError(`the operation store could not be synced to disk: ${(error as Error).message}`, { cause: error });
            this.failed(refused.message);
            throw refused;
          })
          .finally(() => void (this.syncing = null));
      }
      await this.syncing;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}
