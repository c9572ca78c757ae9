import { createConnection, createServer, type Server } from "node:net";

/** A loopback port that is free now (a test then binds it, or has it bound, as fixed ports are). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Holds a loopback port (any free one unless given) as another process would, until release(). */
export async function holdPort(port = 0): Promise<{ port: number; server: Server; release: () => Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    port: (server.address() as { port: number }).port,
    server,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Does something accept connections at this URL's host and port? */
export const portOpen = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
