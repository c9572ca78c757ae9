// Processes: listing them, stopping one by PID, and the orphan guard (a child dies with its owner).
export { listProcesses, commandLineOf, isAlive, stopPid, type ProcessInfo } from "./processes.ts";
export { guardedCommand } from "./orphan-guard.ts";
