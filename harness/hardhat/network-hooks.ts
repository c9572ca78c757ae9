import type { NetworkHooks } from "hardhat/types/hooks";
import { hardhatDevStack, noDevStackOn } from "./devstack.ts";
import { DEVSTACK_NETWORK } from "./names.ts";
import { stackFor } from "./stacks.ts";

export default async (): Promise<Partial<NetworkHooks>> => ({
  newConnection: async (context, next) => {
    const connection = await next(context);
    if (connection.networkName !== DEVSTACK_NETWORK) {
      Object.defineProperty(connection, "devstack", noDevStackOn(connection.networkName));
      return connection;
    }
    // Started already by the URL's resolution, unless a test run's end stopped it: then it starts again
    // on the same ports (Hardhat keeps the URL it resolved).
    connection.devstack = hardhatDevStack(await stackFor(context));
    return connection;
  },
});
