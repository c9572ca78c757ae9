// Processes: listing them, stopping one by PID, the orphan guard (a child dies with its owner), and
// what a CLI hears of the processes that launched it (npm, its sh), and its memory once started.
export { listProcesses, childProcesses, commandLineOf, isAlive, stopPid, type ProcessInfo } from "./processes.ts";
export { guardedCommand } from "./orphan-guard.ts";
export { watchLaunch } from "./launcher.ts";
export { settleMemoryAfterStart } from "./settle-memory.ts";
