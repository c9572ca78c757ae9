import { createServer } from "node:net";
import { QueueDevstackError } from "../../src/errors/index.ts";

export type PortRole = "chain" | "queue";

/** A port the stack was asked to bind is held by another process. */
export class PortInUseError extends QueueDevstackError {
  override name = "PortInUseError";
  /** Node's own code for a port in use, as a failed listen() has it. */
  readonly code = "EADDRINUSE";
  readonly port: number;
  readonly role: PortRole;

  constructor(host: string, port: number, role: PortRole) {
    super(`port ${port} (the ${role === "chain" ? "chain's RPC" : "queue runtime"}) is in use on ${host}`);
    this.port = port;
    this.role = role;
  }
}

/**
 * Checks, before anything is started or written, that the stack's fixed ports can be bound: a busy
 * port refused after anvil was up and the manifest written would leave both to undo. Port 0 (any free
 * port) needs no check. Whatever takes a port between this check and the bind is still caught there.
 */
export async function checkPortsFree(host: string, ports: Record<PortRole, number>): Promise<void> {
  if (ports.chain !== 0 && ports.chain === ports.queue) {
    throw new Error(`the chain and the queue runtime cannot share port ${ports.chain}: give them different ports (or 0 for any free port)`);
  }
  for (const role of ["chain", "queue"] as const) {
    if (ports[role] !== 0) await checkPortFree(host, ports[role], role);
  }
}

async function checkPortFree(host: string, port: number, role: PortRole): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port, exclusive: true }, () => resolve());
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") throw new PortInUseError(host, port, role);
    throw new Error(`cannot bind port ${port} (${role}) on ${host}: ${(error as Error).message}`, { cause: error });
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
