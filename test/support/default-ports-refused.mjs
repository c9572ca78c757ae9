// Preloaded into every Node process of a test run (NODE_OPTIONS, set by default-ports.ts): a listen on a
// default port (anvil's 8545, the queue's 8700) throws, so a test that would start something there fails
// every time, not only when a developer's own stack holds the port. Tests use free ports (issue 30, item 20).
// Plain JavaScript: it is loaded by every Node the tests start, the system's older one too.
import net from "node:net";

const DEFAULT_PORTS = new Set([8545, 8700]);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  const port = Number(typeof first === "object" && first !== null ? first.port : first);
  if (DEFAULT_PORTS.has(port)) {
    throw Object.assign(new Error(`a test run listens on free ports only (0), never on the default port ${port}`), { code: "EDEFAULTPORT" });
  }
  return listen.apply(this, args);
};
